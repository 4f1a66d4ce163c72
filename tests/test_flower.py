"""k-FED, federated k-means, LocalKMeans and distributed Lloyd as Flower apps on real
processes (fedclust.runtime.flower).

Runs on N = 4 SuperNodes, launched in one module fixture, as many at once as the machine has
cores (much of a run's time is Flower's polling, so they overlap): k-FED and federated k-means
with every device answering and with one SuperNode killed mid-fit (:data:`RUNS`; with
``FEDCLUST_FLOWER_ALL=1`` LocalKMeans and distributed Lloyd too). Skipped without the
``flower`` extra.
"""

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr", reason="Flower is an optional extra: pip install -e '.[flower]' "
                                   "(requirements-flower.lock)")

from flwr.app import RecordDict  # noqa: E402

from fedclust import DistributedLloyd, FederatedKMeans, KFed, LocalKMeans  # noqa: E402
from fedclust._validation import fit_rng  # noqa: E402
from fedclust.federation import Federation  # noqa: E402
from fedclust.rounds import sample_participants  # noqa: E402
from fedclust.runtime import flower  # noqa: E402
from fedclust.runtime.flower import launcher as flower_launcher  # noqa: E402
from fedclust.runtime.flower import server as flower_server  # noqa: E402
from fedclust.runtime.processes import ProcessGroup  # noqa: E402

N_NODES = 4
# long enough for a live SuperNode on a loaded machine (an exchange took up to 48 s with four
# runs on two cores, 56 s when every SuperExec polled ten times a second); a killed one costs
# its run this much once
ROUND_TIMEOUT = 90.0
KILLED = 2
ALL_RUNS = {
    "kfed": ("kfed", None),
    "fedkmeans": ("fedkmeans", None),
    "localkmeans": ("localkmeans", None),
    "distributed_lloyd": ("distributed_lloyd", None),
    "kfed_killed": ("kfed", {"device": KILLED, "exchange": "local", "round": 1}),
    "fedkmeans_killed": ("fedkmeans", {"device": KILLED, "exchange": "round", "round": 2}),
}
#: The smallest case, what CI runs: one algorithm of each kind (k-FED's one round, federated
#: k-means' rounds with client sampling), each with every device answering and with a
#: SuperNode killed. ``FEDCLUST_FLOWER_ALL=1`` adds LocalKMeans and distributed Lloyd (every
#: run's ClientApp processes start together on the same cores: each run added slows all).
RUNS = ALL_RUNS if os.environ.get("FEDCLUST_FLOWER_ALL") == "1" else {
    name: run for name, run in ALL_RUNS.items() if run[0] in ("kfed", "fedkmeans")}
#: Runs at once: one per core. Each exchange starts one ClientApp process per SuperNode, and
#: Flower refuses one that takes up its task more than 30 s after the claim; all four runs at
#: once on two cores (16 ClientApps starting together, about 3 s of CPU each) passed on one
#: host and failed on a slower one, and failed on one core of this host (2026-11-27).
CONCURRENT_RUNS = len(os.sched_getaffinity(0))
#: The runs with every device answering.
ANSWERING = [name for name, (_, kill) in RUNS.items() if kill is None]
_FLOWER_COMMANDS = (b"flower-superlink", b"flower-supernode", b"flower-superexec",
                    b"flwr-serverapp", b"flwr-clientapp", b"flwr run")


def _flower_processes() -> set[int]:
    """Live (not zombie) processes running a Flower command."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(command in cmdline for command in _FLOWER_COMMANDS):
            found.add(int(entry.name))
    return found


@pytest.fixture(scope="module")
def federation():
    return flower.demo_federation(N_NODES, random_state=0)


@pytest.fixture(scope="module")
def runs(federation, tmp_path_factory):
    """Every run of RUNS, launched together; the Flower processes alive before and after."""
    X, devices = federation
    before = _flower_processes()
    results, errors = {}, {}
    # made here: pytest's numbered folders are not safe to make from several threads
    workdirs = {name: tmp_path_factory.mktemp(name) for name in RUNS}

    def go(name):
        algorithm, kill = RUNS[name]
        params = flower.demo_params(algorithm, X, random_state=0)
        try:
            run = flower.launch(algorithm, params, X, devices, kill=kill,
                                round_timeout=ROUND_TIMEOUT, timeout=500,
                                workdir=workdirs[name])
            fitted = fits[name]
            results[name] = (run, fitted, flower.measurements(run, fitted,
                                                              algorithm=algorithm))
        except Exception as error:  # reported by the tests that need the run
            errors[name] = error

    # the in-process fits first: they compile the numba kernels into the source tree's cache,
    # which every ClientApp process then loads (compiling in each of them, all at once,
    # outlasted the round timeout on a fresh checkout)
    fits = {name: flower.fit_in_process(algorithm, flower.demo_params(algorithm, X,
                                                                      random_state=0),
                                        X, devices) for name, (algorithm, _) in RUNS.items()}
    # a killed run waits ROUND_TIMEOUT for its lost device: each starts beside a run that works
    order = sorted(RUNS, key=lambda name: (RUNS[name][0], RUNS[name][1] is not None))
    with ThreadPoolExecutor(max_workers=CONCURRENT_RUNS) as pool:
        list(pool.map(go, order))
    return results, errors, before, _flower_processes()


def _run(runs, name):
    results, errors, _, _ = runs
    if name in errors:
        raise errors[name]
    return results[name]


def _metric(table, metric):
    rows = table[(table["scope"] == "run") & (table["metric"] == metric)]
    assert len(rows) == 1, metric
    return float(rows["value"].iloc[0])


@pytest.mark.slow
@pytest.mark.parametrize("name", ANSWERING)
def test_flower_run_gives_the_in_process_centres_and_cost(runs, name):
    run, fitted, table = _run(runs, name)
    assert run.result["lost_devices"] == []
    assert run.result["devices"] == list(range(N_NODES))
    # the same steps on the same draws: the same centres, bit for bit on these devices
    assert _metric(table, "centers_max_abs_diff") <= 1e-9
    # the devices' costs summed in another order than the in-process sum
    assert _metric(table, "cost_rel_diff") <= 1e-12
    assert _metric(table, "devices_lost") == 0
    if name == "distributed_lloyd":  # stopped where fit converged, by the repeated centres
        assert fitted.converged_ and run.result["n_iter"] == fitted.n_iter_


@pytest.mark.slow
@pytest.mark.parametrize("name", ANSWERING)
def test_the_ledger_is_within_the_measured_payload_and_the_wire(runs, name):
    _, fitted, table = _run(runs, name)
    ledger = fitted.communication_.ledger()
    assert _metric(table, "ledger_bytes") == ledger["bytes"] > 0
    # every ledger message kind travels as a record of its own, with its serialization
    for direction in ("up", "down"):
        assert ledger[f"bytes_{direction}"] <= _metric(table, f"payload_ledger_bytes_{direction}")
    assert _metric(table, "payload_ledger_bytes") <= _metric(table, "payload_bytes")
    assert _metric(table, "payload_bytes") + _metric(table, "control_bytes") \
        <= _metric(table, "wire_bytes")
    # each SuperNode's connections carried bytes both ways
    per_device = table[(table["scope"] == "device") & (table["metric"] == "wire_bytes_up")]
    assert len(per_device) == N_NODES and (per_device["value"] > 0).all()


@pytest.mark.slow
def test_kfed_goes_on_without_a_killed_device_as_algorithm_2_on_the_others(runs, federation):
    run, _, table = _run(runs, "kfed_killed")
    assert run.result["lost_devices"] == [KILLED]
    assert _metric(table, "devices_lost") == 1
    assert set(table["lost_devices"]) == {str(KILLED)}
    step = next(e for e in run.result["exchanges"] if e["exchange"] == "local")
    assert (step["sent"], step["answered"], step["lost"]) == (N_NODES, N_NODES - 1, [KILLED])
    # in process: fit's steps with the killed device's centres held back from the server
    X, devices = federation
    est = KFed(**flower.cli.DEMO_PARAMS["kfed"], random_state=0)
    fed = Federation.from_devices(X, devices)
    rng = fit_rng(0)
    per_device = est.device_clusters_for(N_NODES)
    participating = np.zeros(N_NODES, dtype=bool)
    participating[sample_participants(N_NODES, est.participation, rng)] = True
    local = est._local_clustering(fed, rng, per_device)
    device_of_center, slot = np.nonzero(local.valid)
    participating[list(fed.device_ids).index(KILLED)] = False
    _, expected, *_ = est.server_step(local.centers[device_of_center, slot],
                                       local.sizes[device_of_center, slot], device_of_center,
                                       participating, per_device, rng)
    assert np.abs(np.asarray(run.result["centers"]) - expected).max() <= 1e-9
    # the cost is the answering devices' only
    assert run.result["cost_devices"] == [d for d in range(N_NODES) if d != KILLED]


@pytest.mark.slow
def test_federated_kmeans_carries_on_with_the_clients_left(runs):
    run, _, _ = _run(runs, "fedkmeans_killed")
    assert run.result["lost_devices"] == [KILLED]
    rounds = [e for e in run.result["exchanges"] if e["exchange"] == "round"]
    assert [e["round"] for e in rounds] == [1, 2, 3]  # every round ran
    assert rounds[1]["lost"] == [KILLED]
    assert rounds[1]["answered"] == rounds[1]["sent"] - 1
    # a lost client is not asked again
    later = [m for m in run.result["messages"] if m["exchange"] in ("round", "evaluate")
             and m["device"] == KILLED and m["direction"] == "down"
             and (m["exchange"] == "evaluate" or m["round"] > 2)]
    assert later == []
    history = run.result["history"]
    assert history["participants"][1] == rounds[1]["answered"]
    assert np.isfinite(np.asarray(run.result["centers"])).all()


@pytest.mark.slow
def test_no_flower_process_is_left(runs):
    _, _, before, after = runs
    assert after <= before, f"Flower processes left running: {sorted(after - before)}"


def test_process_group_stops_what_it_started_and_its_stragglers(tmp_path):
    """A child that leaves its process group (setsid, as Flower's SuperExec starts the
    ServerApp) is found by the group's marker and stopped too."""
    group = ProcessGroup()
    with group:
        group.start("parent", ["bash", "-c", "setsid sleep 300 & sleep 300"],
                    log_path=tmp_path / "log")
        deadline = time.monotonic() + 10
        while len(group.stragglers()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(group.stragglers()) == 3  # bash and its two sleeps
    assert group.stragglers() == []


def test_launch_refuses_an_unknown_algorithm_and_a_kill_of_no_device(federation):
    X, devices = federation
    with pytest.raises(ValueError, match="algorithm must be one of"):
        flower.launch("lloyd", {}, X, devices)
    with pytest.raises(ValueError, match="kill names device 99"):
        flower.launch("kfed", {}, X, devices, kill={"device": 99, "exchange": "local"})


def test_local_lloyd_steps_on_each_machine_then_the_aggregate_is_local_kmeans():
    """The LocalKMeans app's composition, in process: each machine alone (devices above the
    kernel's 256-row block included) runs its steps, the server aggregates; fit's centres to
    the last bits."""
    from fedclust import LocalKMeans
    from fedclust.algorithms.local_kmeans import local_lloyd_steps
    from fedclust.rounds import aggregate_centers

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5)) + np.repeat(5 * rng.normal(size=(3, 5)), 500, axis=0)
    devices = rng.integers(0, 3, len(X))
    init = X[rng.choice(len(X), 3, replace=False)]
    fitted = LocalKMeans(3, local_steps=2, n_iter=5, init=init).fit(X, devices=devices)
    fed = Federation.from_devices(X, devices)
    centers = init
    for steps in (2, 2, 1):
        machines = [local_lloyd_steps(Federation.from_devices(
            fed.device_data(z), np.zeros(fed.device_sizes[z], dtype=int)), centers, steps)
            for z in range(fed.n_devices)]
        centers, _ = aggregate_centers(np.array([m[0][0] for m in machines]),
                                       np.array([m[1][0] for m in machines]), centers)
    assert np.abs(centers - fitted.cluster_centers_).max() <= 1e-12


def test_fedkmeans_app_refuses_mini_batches_and_seedings_it_cannot_reproduce():
    with pytest.raises(ValueError, match="batch_size=10"):
        flower_server._check_fedkmeans(FederatedKMeans(batch_size=10))
    with pytest.raises(ValueError, match="init='greedy-k-means\\+\\+'"):
        flower_server._check_fedkmeans(FederatedKMeans())


def test_localkmeans_app_refuses_a_seeding_and_no_aggregation():
    link = flower_server._Link(grid=None, timeout=1.0, spec={})
    with pytest.raises(ValueError, match="init='greedy-k-means\\+\\+'"):
        flower_server._serve_localkmeans(LocalKMeans(), None, link)
    with pytest.raises(ValueError, match="local_steps=None"):
        flower_server._serve_localkmeans(LocalKMeans(init=np.zeros((8, 2)), local_steps=None),
                                  None, link)


def test_apps_refuse_the_tol_test_and_name_the_stopping_rule_they_run():
    """The tol test needs the data's moments, which the apps do not exchange."""
    link = flower_server._Link(grid=None, timeout=1.0, spec={})
    init = np.zeros((8, 2))
    with pytest.raises(ValueError, match=r"n_iter=None: .* runs a number of iterations n_iter"):
        flower_server._serve_localkmeans(LocalKMeans(init=init), None, link)
    with pytest.raises(ValueError, match=r"tol=0.0001: .* runs tol=0 \(until no label"):
        flower_server._serve_distributed_lloyd(DistributedLloyd(init=init), None, link)
    with pytest.raises(ValueError, match=r"tol=0.0001: .* runs tol=None"):
        flower_server._serve_fedkmeans(FederatedKMeans(init="uniform"), None, link)
    with pytest.raises(ValueError, match=r"refine_max_iter=300: .* runs k-FED's one round"):
        flower_server._serve_kfed(KFed(), None, link)


class _SilentGrid:
    """A Grid whose devices never answer."""

    def create_message(self, content, message_type, node_id, group_id):
        return node_id

    def push_messages(self, messages):
        return [f"message-{node_id}" for node_id in messages]

    def pull_messages(self, message_ids):
        return []


def test_a_run_stops_with_the_exchange_named_when_its_last_device_is_lost():
    link = flower_server._Link(grid=_SilentGrid(), timeout=0.0, spec={})
    link.devices = [flower_server._Device(position=p, node_id=10 + p, device=20 + p, n_rows=5,
                                   n_drawable=5, n_features=2, itemsize=8, weighted=False,
                                   weight_total=5.0) for p in range(3)]
    link.lost = {0}
    # a device asked alone does not answer: lost, and the run goes on with the one left
    assert link.exchange("round", {1: RecordDict()}, "train", round_=1) == {}
    assert link.lost == {0, 1} and link.exchanges[-1]["lost"] == [21]
    with pytest.raises(flower.DevicesLostError,
                       match=r"^every device is lost: 1 did not answer the 'round' exchange "
                             r"\(round 2\) within 0 s, 2 were lost before$"):
        link.exchange("round", {2: RecordDict()}, "train", round_=2)
    assert link.exchanges[-1]["lost"] == [22]  # booked before it stops


def test_a_failed_runs_error_names_the_logs_where_flower_refused_late_app_processes(tmp_path):
    (tmp_path / "superlink.log").write_text("INFO :      Starting Flower SuperLink\n")
    (tmp_path / "supernode-0.log").write_text("INFO :      Received successfully\n")
    assert flower_launcher._refused_starts(tmp_path) == ""
    # the line a SuperNode logged in the failing CI run (2026-11-27)
    refused = ("\x1b[91mERROR \x1b[0m:     [/v1/runtime/pull-task-input][ApiError:1008] Runtime "
               "task-token authentication failed.\n")
    (tmp_path / "supernode-1.log").write_text(refused)
    (tmp_path / "supernode-3.log").write_text(refused)
    message = flower_launcher._refused_starts(tmp_path)
    assert message.startswith("; supernode-1.log, supernode-3.log logged Flower's 'Runtime "
                              "task-token authentication failed': ")
    assert "more than 30 s after" in message and "run fewer SuperNodes" in message


def test_partitions_hold_each_devices_rows_in_federation_order(tmp_path, federation):
    X, devices = federation
    order = np.random.default_rng(0).permutation(len(X))  # devices interleaved in the input
    files = flower.write_partitions(X[order], devices[order], None, tmp_path)
    fed = Federation.from_devices(X[order], devices[order])
    assert [device for device, _ in files] == fed.device_ids.tolist()
    for z, (_, path) in enumerate(files):
        with np.load(path) as data:
            assert np.array_equal(data["X"], fed.device_data(z)) and "w" not in data.files


def test_run_config_is_toml_the_app_reads_back(tmp_path):
    import tomllib

    params = {"n_clusters": 4, "init": [[0.0, 1.5], [2.0, 3.0]]}
    text = flower.run_config_toml("fedkmeans", params, n_devices=3, result_path=tmp_path / "r",
                                  round_timeout=5)
    config = tomllib.loads(text)
    assert config["algorithm"] == "fedkmeans" and config["n-devices"] == 3
    assert json.loads(config["params"]) == params
    assert config["round-timeout"] == 5.0 and config["spec"] == ""
    # every key the launcher sets is one the app declares (flwr run refuses others)
    app = tomllib.loads((flower.write_app(tmp_path / "app") / "pyproject.toml").read_text())
    assert set(config) == set(app["tool"]["flwr"]["app"]["config"])


def test_summary_markdown_puts_one_column_per_run_with_its_lost_devices():
    def run(algorithm, lost, values):
        return [{"algorithm": algorithm, "n_nodes": 10, "lost_devices": lost, "scope": "run",
                 "key": "", "metric": metric, "value": value}
                for metric, value in values.items()] + [
            {"algorithm": algorithm, "n_nodes": 10, "lost_devices": lost, "scope": "device",
             "key": "3", "metric": "wire_bytes_up", "value": 1e9}]

    import pandas as pd

    table = pd.DataFrame(run("fedkmeans", "", {"ledger_bytes": 8272, "devices_lost": 0})
                         + run("kfed", "2", {"ledger_bytes": 960, "devices_lost": 1,
                                             "wire_over_payload": 52.4})
                         + run("kfed", "", {"ledger_bytes": 960, "centers_max_abs_diff": 0.0,
                                            "devices_lost": 0}))
    lines = flower.summary_markdown(table).splitlines()
    # the vocabulary's order of algorithms, the run without losses first
    assert lines[0] == "| | kfed, N=10 | kfed, N=10, 2 killed | fedkmeans, N=10 |"
    assert "| ledger bytes | 960 | 960 | 8,272 |" in lines
    assert "| devices lost | 0 | 1 | 0 |" in lines
    assert "| centres: max abs diff vs in-process | 0.0e+00 | \u2013 | \u2013 |" in lines
    # a device's row is not a run's: 1e9 appears nowhere
    assert "1,000,000,000" not in "\n".join(lines)
    assert "|   \u2026 over payload + control | \u2013 | 52 | \u2013 |" in lines

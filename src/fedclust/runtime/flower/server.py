"""The server side: the ServerApp, which talks to the devices through the SuperLink (an
exchange at a time, a device lost when it does not answer within the round's timeout) and
runs the estimators' server steps as ``fit`` does.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Context, RecordDict
from flwr.serverapp import Grid, ServerApp

from ..._validation import fit_rng
from ...algorithms.distributed_lloyd import DistributedLloyd
from ...algorithms.federated_kmeans import FederatedKMeans, _bounds
from ...algorithms.kfed import KFed, local_draws, seeded_clusters
from ...algorithms.local_kmeans import LocalKMeans
from ...rounds import aggregate_centers, round_history, sample_participants
from .protocol import _PULL_INTERVAL_S, DevicesLostError, _array, estimator_of, payload_bytes


@dataclass
class _Device:
    position: int
    device: int
    node_id: int
    n_rows: int
    n_drawable: int
    n_features: int
    itemsize: int
    weighted: bool
    weight_total: float


@dataclass
class _Link:
    """The server's exchanges with the devices: one message to each of some devices, the
    replies within ``timeout``; every message's bytes and every exchange's wall time
    recorded; devices that do not answer are lost."""

    grid: Grid
    timeout: float
    spec: dict
    devices: list = field(default_factory=list)
    lost: set = field(default_factory=set)
    messages: list = field(default_factory=list)
    exchanges: list = field(default_factory=list)

    def _pause(self, exchange: str, round_: int) -> None:
        """The fault test's hook: before the exchange the spec names, say so and wait for
        the launcher (which kills a SuperNode meanwhile)."""
        pause = self.spec.get("pause_before")
        if not pause or pause["exchange"] != exchange or pause["round"] != round_:
            return
        progress = Path(self.spec["progress_path"])
        progress.write_text(json.dumps({"exchange": exchange, "round": round_}))
        ack = progress.with_suffix(".ack")
        deadline = time.monotonic() + 120
        while not ack.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no acknowledgement in {ack} within 120 s")
            time.sleep(0.05)

    def exchange(self, exchange: str, contents: dict, message_type: str, round_: int = 0,
                 node_ids: dict | None = None, timeout: float | None = None) -> dict:
        """Send ``contents[position]`` to every device named and return the replies' contents
        by position (lost devices are left out, and not asked again), waiting ``timeout``
        seconds at most (default: the link's)."""
        self._pause(exchange, round_)
        ids = node_ids or {d.position: d.node_id for d in self.devices}
        targets = {p: c for p, c in contents.items() if p not in self.lost}
        by_node = {ids[p]: p for p in targets}
        out = []
        for position, content in targets.items():
            out.append(self.grid.create_message(content, message_type, ids[position],
                                                group_id=f"{exchange}-{round_}"))
            self._book(exchange, round_, position, "down", content)
        start = time.perf_counter()
        wait = self.timeout if timeout is None else timeout
        replies = self._send_and_receive(out, wait)
        wall = time.perf_counter() - start
        answers = {}
        for reply in replies:
            position = by_node.get(reply.metadata.src_node_id)
            if position is None or reply.has_error():
                continue
            answers[position] = reply.content
            self._book(exchange, round_, position, "up", reply.content)
        newly_lost = sorted(set(targets) - set(answers))
        self.lost.update(newly_lost)
        self.exchanges.append({"exchange": exchange, "round": round_, "wall_s": wall,
                               "sent": len(targets), "answered": len(answers),
                               "lost": [self._device_id(p) for p in newly_lost]})
        if self.devices and len(self.lost) == len(self.devices):
            # nothing is left to compute from: say so rather than fail on an empty reply set
            raise DevicesLostError(
                f"every device is lost: {len(newly_lost)} did not answer the {exchange!r} "
                f"exchange (round {round_}) within {wait:g} s, "
                f"{len(self.devices) - len(newly_lost)} were lost before")
        return answers

    def _send_and_receive(self, messages: list, timeout: float) -> list:
        """``Grid.send_and_receive`` with a short pull interval: Flower's pulls the replies
        every 3 s, which added up to 3 s to every exchange (a round here takes a few
        seconds)."""
        waiting = set(self.grid.push_messages(messages))
        deadline = time.monotonic() + timeout
        replies = []
        while waiting:
            pulled = list(self.grid.pull_messages(waiting))
            replies += pulled
            waiting -= {reply.metadata.reply_to_message_id for reply in pulled}
            if not waiting or time.monotonic() >= deadline:
                break
            time.sleep(_PULL_INTERVAL_S)
        return replies

    def _device_id(self, position: int) -> int:
        return self.devices[position].device if self.devices else position

    def _book(self, exchange, round_, position, direction, content) -> None:
        for record, n_bytes in payload_bytes(content).items():
            self.messages.append({"exchange": exchange, "round": round_,
                                  "device": self._device_id(position),
                                  "direction": direction, "record": record,
                                  "bytes": n_bytes})


def _describe_devices(link: _Link, n_devices: int, wait_s: float) -> list:
    """Wait for ``n_devices`` SuperNodes, ask each for its device id and size, and order them
    as a :class:`~fedclust.federation.Federation` orders devices (by id)."""
    deadline = time.monotonic() + wait_s
    while len(node_ids := sorted(link.grid.get_node_ids())) < n_devices:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(node_ids)} of {n_devices} SuperNodes connected within "
                               f"{wait_s:g} s")
        time.sleep(0.2)
    positions = dict(enumerate(node_ids))
    # the first message of a run also makes every SuperNode fetch the app: the setup's wait
    answers = link.exchange("describe", {p: RecordDict() for p in positions}, "query",
                            node_ids=positions, timeout=wait_s)
    if len(answers) < len(positions):
        raise RuntimeError(f"only {len(answers)} of {len(positions)} SuperNodes described "
                           f"themselves")
    described = sorted(((dict(answers[p]["describe"]), positions[p]) for p in answers),
                       key=lambda item: item[0]["device"])
    devices = [_Device(position=i, node_id=node, device=int(d["device"]),
                       n_rows=int(d["n_rows"]), n_drawable=int(d["n_drawable"]),
                       n_features=int(d["n_features"]), itemsize=int(d["itemsize"]),
                       weighted=bool(d["weighted"]), weight_total=float(d["weight_total"]))
               for i, (d, node) in enumerate(described)]
    if len({d.device for d in devices}) < len(devices):
        raise ValueError(f"two SuperNodes share a device-id: {[d.device for d in devices]}")
    link.devices = devices
    device_of_position = {p: int(answers[p]["describe"]["device"]) for p in answers}
    for message in link.messages:  # booked by node position before the ids were known
        message["device"] = device_of_position[message["device"]]
    return devices


def _config(step: str, **values) -> ConfigRecord:
    return ConfigRecord({"step": step, **values})


def _serve_kfed(est: KFed, rng, link: _Link) -> dict:
    _check_fixed_rounds(est, "refine_max_iter", est.refine_max_iter == 0,
                        "k-FED's one round, refine_max_iter=0")
    devices = link.devices
    Z, d = len(devices), devices[0].n_features
    per_device = est.device_clusters_for(Z)
    participating = np.zeros(Z, dtype=bool)
    participating[sample_participants(Z, est.participation, rng)] = True
    seeded = seeded_clusters(np.array([dev.n_drawable for dev in devices]), per_device)
    draws = local_draws(seeded, d, rng, projection=bool(est.local_projection))
    contents = {}
    for dev in devices:
        content = {"config": _config("kfed.local", k_prime=int(per_device[dev.position]),
                                     seeded=int(seeded[dev.position]))}
        if draws is not None:
            mine = draws.for_device(dev.position)
            arrays = {"uniforms": _array(mine.uniforms)}
            if mine.start is not None:
                arrays["start"] = _array(mine.start)
            content["draws"] = ArrayRecord(arrays)
        contents[dev.position] = RecordDict(content)
    answers = link.exchange("local", contents, "train", round_=1)

    # the local centres that arrived, device after device (the order fit stacks them in)
    centers, sizes, device_of_center = [], [], []
    for position in sorted(answers):
        local = answers[position]["local_centers"]["centers"].numpy()
        centers.append(local)
        device_of_center.append(np.full(len(local), position))
        if "local_sizes" in answers[position].array_records:
            sizes.append(answers[position]["local_sizes"]["sizes"].numpy())
        else:
            sizes.append(np.zeros(len(local)))
    centers = np.concatenate(centers)
    sizes = np.concatenate(sizes)
    device_of_center = np.concatenate(device_of_center).astype(np.int64)
    arrived = np.zeros(Z, dtype=bool)
    arrived[list(answers)] = True
    init, global_centers, center_labels, n_rounds, start = est.server_step(
        centers, sizes, device_of_center, participating & arrived, per_device, rng)
    # the identities down; the global centres ride along (record "evaluate", not in the
    # ledger) for the cost of the induced clustering, which each device sends back
    evaluate = ArrayRecord({"centers": _array(global_centers.astype(
        f"f{devices[0].itemsize}", copy=False))})
    contents = {p: RecordDict({"config": _config("kfed.ids"), "cluster_ids": ArrayRecord(
        {"ids": _array(center_labels[device_of_center == p])}), "evaluate": evaluate})
        for p in answers}
    costs = link.exchange("ids", contents, "train", round_=1)
    return {"centers": global_centers, "n_iter": n_rounds,
            "start_device": None if start is None else devices[start].device, "costs": costs}


def _check_fedkmeans(est: FederatedKMeans) -> None:
    if est.batch_size is not None:
        raise ValueError(f"batch_size={est.batch_size!r}: the Flower app runs full-batch "
                         f"epochs only (batch_size=None); the estimator's mini-batches split "
                         f"all sampled clients' rows with one draw, which no client can "
                         f"reproduce alone")
    if isinstance(est.init, str) and est.init != "uniform":
        raise ValueError(f"init={est.init!r}: the Flower app starts from init='uniform' or "
                         f"given centroids (an array); the distributed seedings are not "
                         f"ported to it")


def _serve_fedkmeans(est: FederatedKMeans, rng, link: _Link) -> dict:
    _check_fixed_rounds(est, "tol", est.tol is None, "tol=None (its n_rounds rounds)")
    _check_fedkmeans(est)
    devices = link.devices
    Z, k, d = len(devices), est.n_clusters, devices[0].n_features
    uniform = isinstance(est.init, str)
    low = high = None
    if est.init_bounds is not None:
        low, high = (np.float64(b) for b in _bounds(est.init_bounds))
    elif uniform or est.reassign_after is not None:
        # the feature_range report (fit's _box): the minimum of minima is the minimum
        answers = link.exchange("reports", {dev.position: RecordDict({
            "config": _config("fedkmeans.reports")}) for dev in devices}, "train")
        low = np.min([a["feature_range"]["low"].numpy() for a in answers.values()], axis=0)
        high = np.max([a["feature_range"]["high"].numpy() for a in answers.values()], axis=0)
        low, high = low.astype(np.float64), high.astype(np.float64)
    centers = low + (high - low) * rng.random((k, d)) if uniform else _given_centers(est, devices)
    all_rows = float(sum(dev.weight_total for dev in devices))
    state = est.server_state(centers, low, high, all_rows)
    T = est.n_rounds
    history = round_history(T, points=float, clusters_seen=np.int64, reassigned=np.int64)
    history["aggregated"][:] = True
    for t in range(1, T + 1):
        sampled = sample_participants(Z, est.sample_fraction, rng)
        answers = link.exchange("round", {int(p): RecordDict({
            "config": _config("fedkmeans.round"),
            "centers": ArrayRecord({"centers": _array(state.centers)})}) for p in sampled},
            "train", round_=t)
        answered = [int(p) for p in sampled if int(p) in answers]
        if not answered:
            history["participants"][t - 1] = 0
            continue  # no client answered: the centroids stay
        sizes = np.array([answers[p]["client_counts"]["counts"].numpy() for p in answered],
                         dtype=np.float64)
        client_centers = np.array([answers[p]["client_centers"]["centers"].numpy()
                                   for p in answered])
        est.server_step(state, sizes, client_centers, rng, history, t)
    return {"centers": state.centers, "n_iter": T,
            "history": {key: value.tolist() for key, value in history.items()}}


def _given_centers(est, devices) -> np.ndarray:
    """``init`` as an array (the data's dtype, as ``initial_centers`` casts it)."""
    centers = np.asarray(est.init, dtype=f"f{devices[0].itemsize}")
    shape = (est.n_clusters, devices[0].n_features)
    if centers.shape != shape:
        raise ValueError(f"init array must have shape {shape}; got {centers.shape}")
    return centers.copy()


def _check_fixed_rounds(est, name: str, ported: bool, what: str) -> None:
    """Refuse a stopping rule the Flower app does not run (the ``tol`` test needs the data's
    moments, which the apps do not exchange): say which setting it runs."""
    if not ported:
        raise ValueError(f"{name}={getattr(est, name)!r}: the Flower app of "
                         f"{type(est).__name__} runs {what}; pass that")


def _local_steps_round(link: _Link, centers, n_steps: int, round_: int):
    """One round of LocalKMeans' exchange: the centres down to every device left, ``n_steps``
    local Lloyd steps on each, their centres and cluster weights up; the size-weighted
    aggregate (:func:`fedclust.rounds.aggregate_centers`), or None when no device answered."""
    answers = link.exchange("round", {dev.position: RecordDict({
        "config": _config("localkmeans.round", n_steps=n_steps),
        "centers": ArrayRecord({"centers": _array(centers)})})
        for dev in link.devices if dev.position not in link.lost}, "train", round_=round_)
    if not answers:
        return None
    machines = sorted(answers)
    machine_centers = np.array([answers[p]["local_centers"]["centers"].numpy()
                                for p in machines])
    totals = np.array([answers[p]["local_counts"]["counts"].numpy() for p in machines],
                      dtype=np.float64)
    return aggregate_centers(machine_centers, totals, centers)[0]


def _serve_localkmeans(est: LocalKMeans, rng, link: _Link) -> dict:
    if isinstance(est.init, str):
        raise ValueError(f"init={est.init!r}: the Flower app starts LocalKMeans from given "
                         f"centres (an array); LocalKMeans++ is not ported to it")
    if est.local_steps is None:
        raise ValueError("local_steps=None (no aggregation) sends nothing: nothing to run on "
                         "Flower")
    _check_fixed_rounds(est, "n_iter", est.n_iter is not None, "a number of iterations n_iter")
    devices = link.devices
    L, T = est.local_steps, est.n_iter
    global_centers = _given_centers(est, devices)
    # one exchange per aggregation: L local steps from the global centres (fewer in a last,
    # partial period: fit's final upload), then the size-weighted aggregate
    for r, first in enumerate(range(0, T, L), start=1):
        aggregated = _local_steps_round(link, global_centers, min(L, T - first), r)
        if aggregated is not None:  # else no machine answered: the centres stay
            global_centers = aggregated
    # the final broadcast (fit books it when T is a multiple of L) is the evaluate exchange
    return {"centers": global_centers, "n_iter": T, "final_record": "centers"
            if T % L == 0 else "evaluate"}


def _serve_distributed_lloyd(est: DistributedLloyd, rng, link: _Link) -> dict:
    """Naive distributed Lloyd: every round the server sends the centres, every device
    assigns its rows and sends each cluster's mean and weight (the kernel's pass on its rows,
    the same as LocalKMeans with one local step: the sums' information in as many floats),
    and the server's weighted aggregate is the next centres (pooled Lloyd's update, summed
    over devices: equal to ``fit``'s to rounding, about 1e-16).

    ``fit`` stops when an assignment repeats the previous one; here the devices' answers
    then repeat, bit for bit, so the aggregate repeats the centres: round ``r`` with
    ``c_r == c_{r-1}`` is ``fit``'s converged iteration ``r - 1`` (``r`` rounds, as the
    ledger books them). Without convergence by ``max_iter`` one more round checks it (the
    ledger books only the final broadcast then: the payload holds one round more)."""
    if isinstance(est.init, str):
        raise ValueError(f"init={est.init!r}: the Flower app starts distributed Lloyd from "
                         f"given centres (an array); the distributed seedings are not "
                         f"ported to it")
    _check_fixed_rounds(est, "tol", est.tol == 0, "tol=0 (until no label changes)")
    devices = link.devices
    centers = _given_centers(est, devices)
    n_iter, converged = est.max_iter, False
    for r in range(1, est.max_iter + 2):
        updated = _local_steps_round(link, centers, 1, r)
        if updated is None:
            continue  # no device answered: the centres stay
        if r > 1 and np.array_equal(updated, centers):
            n_iter, converged = r - 1, True
            break
        if r > est.max_iter:
            break  # not converged: fit's centres are those of round max_iter
        centers = updated
    return {"centers": centers, "n_iter": n_iter,
            "final_record": "evaluate" if converged else "centers"}


_SERVERS = {"kfed": _serve_kfed, "fedkmeans": _serve_fedkmeans,
            "localkmeans": _serve_localkmeans, "distributed_lloyd": _serve_distributed_lloyd}

server_app = ServerApp()


@server_app.main()
def _main(grid: Grid, context: Context) -> None:
    config = context.run_config
    algorithm = str(config["algorithm"])
    result_path = Path(str(config["result-path"]))
    # the fault test's hook (launch(kill=...)): a JSON file naming the exchange to pause at
    spec = json.loads(Path(str(config["spec"])).read_text()) if config.get("spec") else {}
    link = _Link(grid=grid, timeout=float(config["round-timeout"]), spec=spec)
    result: dict = {"algorithm": algorithm, "error": None}
    started = time.perf_counter()
    try:
        est = estimator_of(context)
        est.check_params()
        devices = _describe_devices(link, int(config["n-devices"]),
                                    float(config["connect-timeout"]))
        result.update(_SERVERS[algorithm](est, fit_rng(est.random_state), link))
        centers = np.asarray(result["centers"]).astype(f"f{devices[0].itemsize}", copy=False)
        costs = result.pop("costs", None)
        record = result.pop("final_record", "evaluate")
        if costs is None:  # the final centres down, each device's k-means cost up
            costs = link.exchange("evaluate", {dev.position: RecordDict({
                record: ArrayRecord({"centers": _array(centers)})}) for dev in devices
                if dev.position not in link.lost}, "evaluate")
        result["centers"] = centers.tolist()
        result["cost"] = float(sum(a["evaluate"]["cost"] for a in costs.values()))
        result["cost_devices"] = sorted(devices[p].device for p in costs)
        result["devices"] = [dev.device for dev in devices]
    except Exception as error:  # the launcher reads the failure from the result file
        result["error"] = f"{type(error).__name__}: {error}"
        raise
    finally:
        result["lost_devices"] = sorted(link.devices[p].device if link.devices else p
                                        for p in link.lost)
        result["messages"] = link.messages
        result["exchanges"] = link.exchanges
        result["wall_s"] = time.perf_counter() - started
        tmp = result_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        os.replace(tmp, result_path)



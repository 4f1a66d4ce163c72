"""Start a SuperLink and N SuperNodes on this machine, run an app, measure the bytes on the
wire and stop every process started (:func:`launch`).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from flwr.common.constant import HEARTBEAT_DEFAULT_INTERVAL

from ...federation import Federation
from ..processes import source_first, usable_cores
from .app import write_app
from .protocol import _TOKEN_REFUSED, ALGORITHMS


@dataclass
class FlowerRun:
    """What one Flower run returned (the server's result file) and what the launcher
    measured on the wire."""

    result: dict
    wire: list
    wall_s: float

def _refused_starts(workdir) -> str:
    """A sentence for a failed run's error: which of its logs (``superlink.log``,
    ``supernode-*.log`` in ``workdir``) show Flower refusing an app process that asked for its
    task after the start window (:data:`_TOKEN_REFUSED`), and what that means; empty if none
    do."""
    refused = [path.name for path in sorted(Path(workdir).glob("super*.log"))
               if _TOKEN_REFUSED in path.read_text(errors="replace")]
    if not refused:
        return ""
    cores = usable_cores()
    return (f"; {', '.join(refused)} logged Flower's 'Runtime {_TOKEN_REFUSED}': app "
            f"processes asked for their tasks more than {HEARTBEAT_DEFAULT_INTERVAL} s after "
            f"Flower claimed them, as when more Flower processes start at once than this "
            f"machine's {cores} core(s) can start in time (each ClientApp about 3 s of CPU); "
            f"run fewer SuperNodes, or fewer runs, at once")


def write_partitions(X, devices, sample_weight, directory) -> list:
    """Write one ``device_<id>.npz`` per device into ``directory`` (arrays ``X``, and ``w``
    with weights), its rows in the order a Federation keeps them (the input order within the
    device): what a SuperNode's ``data-path`` names. Returns ``(device id, path)`` by id."""
    federation = Federation.from_devices(np.asarray(X), np.asarray(devices),
                                         sample_weight=sample_weight)
    files = []
    for z, device in enumerate(federation.device_ids):
        rows = slice(federation.offsets[z], federation.offsets[z + 1])
        arrays = {"X": federation.X[rows]}
        if federation.weights is not None:
            arrays["w"] = federation.weights[rows]
        path = Path(directory) / f"device_{int(device)}.npz"
        np.savez(path, **arrays)
        files.append((int(device), path))
    return files


def _toml_string(value: str) -> str:
    return json.dumps(str(value))  # a JSON string is a TOML basic string


def run_config_toml(algorithm: str, params: dict, *, n_devices: int, result_path,
                    round_timeout: float = 60.0, connect_timeout: float = 120.0,
                    spec="") -> str:
    """The run config ``flwr run --run-config FILE`` takes for one fit (a TOML file: the
    parameters' JSON does not survive the ``key=value`` form)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}; got {algorithm!r}")
    return (f"algorithm = {_toml_string(algorithm)}\n"
            f"params = {_toml_string(json.dumps(params))}\n"
            f"n-devices = {int(n_devices)}\n"
            f"result-path = {_toml_string(result_path)}\n"
            f"round-timeout = {float(round_timeout)!r}\n"
            f"connect-timeout = {float(connect_timeout)!r}\n"
            f"spec = {_toml_string(spec)}\n")


def _start_listening(group, commands: dict, logs: dict, env, *, ports=None, tries=3) -> dict:
    """Start ``commands[name](port)`` for every name, all at once, then wait until each
    listens on its port (a free one unless ``ports`` names it); one that exits first, having
    lost its port to another process, is started again on a new port. Returns the ports."""
    from ..processes import free_port, wait_for_port

    ports = {name: (ports or {}).get(name) or free_port() for name in commands}
    for name, command in commands.items():
        group.start(name, command(ports[name]), log_path=logs[name], env=env)
    for name, command in commands.items():
        for attempt in range(1, tries + 1):
            try:
                wait_for_port(ports[name], timeout=90, process=group.processes[name],
                              name=name)
                break
            except RuntimeError:
                if attempt == tries:
                    raise
                ports[name] = free_port()
                group.start(name, command(ports[name]), log_path=logs[name], env=env)
    return ports


def launch(algorithm: str, params: dict, X, devices, *, sample_weight=None, workdir=None,
           round_timeout: float = 60.0, kill: dict | None = None,
           timeout: float = 600.0) -> FlowerRun:
    """Run ``algorithm`` as a Flower app on one ``flower-superlink`` and one
    ``flower-supernode`` per device, each a separate process on 127.0.0.1 (insecure mode),
    and stop every process started, on success and on failure.

    Parameters
    ----------
    algorithm : {"kfed", "fedkmeans", "localkmeans", "distributed_lloyd"}
    params : dict
        The estimator's parameters (JSON-serializable: an ``init`` array as nested lists).
    X : array-like of shape (n_samples, n_features)
    devices : array-like of int, shape (n_samples,)
        The device of every row; each device's rows go to its own SuperNode (node config
        ``data-path``, ``device-id``).
    sample_weight : array-like of shape (n_samples,), optional
    workdir : path, optional
        Where the partitions, the app, the logs and the result go (a new temporary folder
        by default, left in place for inspection).
    round_timeout : float, default=60
        Seconds the server waits for the replies of one exchange; a device that has not
        answered by then is lost.
    kill : dict, optional
        The fault test: ``{"device": id, "exchange": name, "round": t}`` kills (SIGKILL)
        that device's SuperNode, with its ClientApp processes, just before the server sends
        the exchange (``"local"`` for k-FED's one round, ``"round"`` for a round of federated
        k-means).
    timeout : float, default=600
        Seconds the whole run may take.

    Returns
    -------
    FlowerRun
        ``result``: the server's result (centres, cost, every message's payload bytes by
        record, every exchange's wall time, the lost devices); ``wire``: per SuperNode, the
        bytes its connections carried through a counting relay.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}; got {algorithm!r}")
    from ..processes import CountingRelay, ProcessGroup

    if kill is not None and kill.get("device") not in set(np.unique(devices).tolist()):
        raise ValueError(f"kill names device {kill.get('device')!r}, not one of the devices")
    workdir = Path(workdir if workdir is not None else tempfile.mkdtemp(prefix="fedclust-flower-"))
    workdir.mkdir(parents=True, exist_ok=True)
    files = write_partitions(X, devices, sample_weight, workdir)
    app = write_app(workdir / "app")
    home = workdir / "flwr-home"
    home.mkdir(exist_ok=True)
    result_path, progress_path = workdir / "result.json", workdir / "progress.json"
    for stale in (result_path, progress_path, progress_path.with_suffix(".ack")):
        stale.unlink(missing_ok=True)
    spec_path = ""
    if kill is not None:
        spec_path = workdir / "spec.json"
        spec_path.write_text(json.dumps({"progress_path": str(progress_path), "pause_before": {
            "exchange": kill["exchange"], "round": int(kill.get("round", 1))}}))
    # the ServerApp and ClientApp processes import the fedclust this launcher runs, whatever
    # an editable install elsewhere points to
    source = str(Path(__file__).resolve().parents[2])
    env = {**source_first(source), "FLWR_HOME": str(home)}
    bin_dir = Path(sys.executable).parent
    relays: dict = {}
    started = time.perf_counter()
    with ProcessGroup() as group:
        try:
            port = _start_listening(group, {"superlink": lambda p: [
                str(bin_dir / "flower-superlink"), "--insecure", "--port", str(p)]},
                {"superlink": workdir / "superlink.log"}, env)["superlink"]
            # where `flwr run` finds the SuperLink (FLWR_HOME is this run's)
            (home / "config.toml").write_text(
                f'[superlink]\ndefault = "fedclust-local"\n\n[superlink.fedclust-local]\n'
                f'address = "127.0.0.1:{port}"\ninsecure = true\n')
            commands, logs = {}, {}
            for device, path in files:
                relays[device] = CountingRelay(("127.0.0.1", port))
                commands[f"supernode-{device}"] = lambda p, d=device, f=path: [
                    str(bin_dir / "flower-supernode"), "--insecure",
                    "--superlink", f"127.0.0.1:{relays[d].port}", "--port", str(p),
                    "--node-config", f"data-path={_toml_string(f)} device-id={d}"]
                logs[f"supernode-{device}"] = workdir / f"supernode-{device}.log"
            _start_listening(group, commands, logs, env)
            run_config = workdir / "run_config.toml"
            run_config.write_text(run_config_toml(
                algorithm, params, n_devices=len(files), result_path=result_path,
                round_timeout=round_timeout, spec=spec_path))
            group.start("flwr-run", [str(bin_dir / "flwr"), "run", str(app), "fedclust-local",
                                     "--run-config", str(run_config), "--stream"],
                        log_path=workdir / "flwr-run.log", env=env)
            deadline = time.monotonic() + timeout
            while not result_path.exists():
                if kill is not None and progress_path.exists() \
                        and not progress_path.with_suffix(".ack").exists():
                    group.kill(f"supernode-{kill['device']}")
                    progress_path.with_suffix(".ack").write_text("killed")
                runner = group.processes["flwr-run"]
                if runner.poll() is not None and not result_path.exists():
                    time.sleep(2)  # the result may land just after the stream ends
                    if not result_path.exists():
                        raise RuntimeError(f"flwr run ended (code {runner.returncode}) without "
                                           f"a result; see {workdir / 'flwr-run.log'}"
                                           f"{_refused_starts(workdir)}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no result after {timeout:g} s; logs in {workdir}"
                                       f"{_refused_starts(workdir)}")
                time.sleep(0.1)
        finally:
            group.stop_all()
            for relay in relays.values():
                relay.close()
    result = json.loads(result_path.read_text())
    if result.get("error"):
        raise RuntimeError(f"the ServerApp failed: {result['error']} (logs in {workdir})"
                           f"{_refused_starts(workdir)}")
    wire = [{"device": device, "connections": len(relay.connections),
             "bytes_up": relay.bytes_up, "bytes_down": relay.bytes_down}
            for device, relay in relays.items()]
    return FlowerRun(result=result, wire=wire, wall_s=time.perf_counter() - started)



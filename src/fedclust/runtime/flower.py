"""k-FED, federated k-means, LocalKMeans and distributed Lloyd as Flower apps (``flwr`` 1.42,
the Message API).

The apps call the estimators' own steps, so there is one copy of every algorithm:

* k-FED (:class:`~fedclust.KFed`, one round). The server draws what the federation-wide
  local step would draw (:func:`fedclust.algorithms.kfed.local_draws`) and sends each device its
  share (:meth:`~fedclust.algorithms.kfed.LocalDraws.for_device`); every device runs
  :func:`~fedclust.algorithms.kfed.awasthi_sheffet` on its own rows and sends its local centres
  (and sizes with ``server_weighting="size"``) up; the server runs ``KFed.server_step``
  (Algorithm 2) and sends every device the global cluster of each of its local centres.
* Federated k-means (:class:`~fedclust.FederatedKMeans`, ``n_rounds`` rounds with client
  sampling). Every round the server samples clients as ``fit`` does and sends them the
  centroids; each runs ``FederatedKMeans.client_step`` on its rows and sends its centroids
  and cluster sizes up; the server runs ``FederatedKMeans.server_step``.
* LocalKMeans (:class:`~fedclust.LocalKMeans`, ``n_iter`` local Lloyd steps, aggregated every
  ``local_steps``). Every aggregation the server sends the global centres; each machine runs
  :func:`~fedclust.algorithms.local_kmeans.local_lloyd_steps` (the shared kernel's pass, once
  per step, as ``fit`` runs them) and sends its centres and cluster weights up; the server
  takes their size-weighted aggregate (:func:`fedclust.rounds.aggregate_centers`), as ``fit``
  does. Devices above the kernel's block of 256 rows may differ from ``fit`` in the last bits:
  the federation-wide pass splits a device's sums over its threads' tasks, a device alone
  over its own (about 1e-15 measured).
* Naive distributed Lloyd (:class:`~fedclust.DistributedLloyd`): LocalKMeans' exchange with
  one local step, every round, until the centres repeat (``fit``'s convergence) or
  ``max_iter``; equal to ``fit``'s pooled Lloyd to rounding (the sums are added per device).

The server draws from the generator ``fit`` would use (:func:`fedclust._validation.fit_rng`),
in the same order, so a run with every device answering gives the in-process fit's centres.
Two exchanges carry what the simulator knows without a message and the ledger therefore does
not count: ``describe`` (each device's row count and dimension, once) and ``evaluate`` (the
final centres down, each device's k-means cost up, to measure the cost); the k-FED draws
travel inside the local step's message (record ``draws``: a deployment not bound to reproduce
the simulator would send a seed instead).

A device that does not answer within ``round_timeout`` seconds is *lost*: k-FED's server goes
on with the local centres that arrived (as with devices that do not participate), federated
k-means goes on with the clients left (a lost client sampled in a later round is not asked
again). :func:`launch` starts the processes (one ``flower-superlink``, N
``flower-supernode``), runs an app, measures the bytes and stops every process it started.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, RecordDict
    from flwr.clientapp import ClientApp
    from flwr.clientapp.mod import message_size_mod
    from flwr.common.constant import HEARTBEAT_DEFAULT_INTERVAL
    from flwr.serverapp import Grid, ServerApp
except ImportError as error:  # pragma: no cover - the extra is optional
    raise ImportError("fedclust.runtime.flower needs Flower: pip install -e '.[flower]' "
                      "(pinned in requirements-flower.lock)") from error

from .._validation import fit_rng
from ..algorithms.distributed_lloyd import DistributedLloyd
from ..algorithms.federated_kmeans import FederatedKMeans, _bounds
from ..algorithms.kfed import KFed, LocalDraws, awasthi_sheffet, local_draws, seeded_clusters
from ..algorithms.local_kmeans import LocalKMeans, local_lloyd_steps
from ..federation import Federation
from ..lloyd import assign
from ..metrics import kmeans_cost, labelled_cost
from ..rounds import aggregate_centers, round_history, sample_participants
from ..vocabulary import algorithm_rank

__all__ = ["ALGORITHMS", "KILL_BEFORE", "DevicesLostError", "FlowerRun", "client_app",
           "demo_federation",
           "demo_params", "fit_in_process", "launch", "measurements", "run_and_measure",
           "run_config_toml", "server_app", "summary_markdown", "write_app",
           "write_partitions"]

#: The estimators that run as Flower apps, by the name the run config gives.
ALGORITHMS = {"kfed": KFed, "fedkmeans": FederatedKMeans, "localkmeans": LocalKMeans,
              "distributed_lloyd": DistributedLloyd}

#: Exchanges of control records only (the device sizes; the final centres and costs).
CONTROL_EXCHANGES = ("describe", "evaluate")

#: Records that carry what the simulator knows without a message (not in the ledger): each
#: device's size once, the final centres down and the cost up.
CONTROL_RECORDS = ("describe", "evaluate")

#: Records whose bytes the ledger counts (its message kinds).
LEDGER_RECORDS = ("local_centers", "local_sizes", "cluster_ids", "centers", "client_centers",
                  "client_counts", "feature_range", "client_sizes", "local_counts")

_APP_MODULE = "fedclust_flower_app"

#: How often the server asks the SuperLink for the replies of an exchange (seconds).
_PULL_INTERVAL_S = 0.5

#: What a SuperNode (or the SuperLink) logs when a ClientApp (ServerApp) process asks for its
#: task after Flower's start window closed: a task claimed for a new process must be taken up
#: within ``HEARTBEAT_DEFAULT_INTERVAL`` seconds (30 in flwr 1.42, not configurable), and
#: a ClientApp's start alone (interpreter and Flower's imports) is about 2.8 s of CPU.
_TOKEN_REFUSED = "task-token authentication failed"


class DevicesLostError(RuntimeError):
    """Every device of a run is lost: none is left to answer the server."""


def _array(values) -> Array:
    return Array(np.ascontiguousarray(values))


def payload_bytes(content: RecordDict) -> dict[str, int]:
    """Bytes of every record of a message, as Flower's ``message_size_mod`` counts them
    (``record.count_bytes()``: the arrays' serialized bytes, keys and values of configs)."""
    return {name: int(record.count_bytes()) for name, record in content.items()}


# ---------------------------------------------------------------------------- client side
def _device_rows(context: Context):
    """This SuperNode's rows (and weights), from the file its node config names."""
    path = context.node_config.get("data-path")
    if not path:
        raise ValueError("the SuperNode needs --node-config 'data-path=\"...\" device-id=N': "
                         "data-path names the .npz file of its rows (arrays X, optional w)")
    with np.load(str(path)) as data:
        X = np.ascontiguousarray(data["X"])
        w = np.asarray(data["w"], dtype=np.float64) if "w" in data.files else None
    return X, w


def _estimator(context: Context):
    config = context.run_config
    return ALGORITHMS[str(config["algorithm"])](**json.loads(str(config["params"])))


def _one_device(X, w) -> Federation:
    return Federation.from_devices(X, np.zeros(len(X), dtype=np.int64), sample_weight=w)


client_app = ClientApp(mods=[message_size_mod])


@client_app.query()
def _describe(msg: Message, context: Context) -> Message:
    X, w = _device_rows(context)
    drawable = len(X) if w is None else int((w > 0).sum())
    total = float(len(X) if w is None else w.sum())
    return Message(RecordDict({"describe": ConfigRecord({
        "device": int(context.node_config.get("device-id", -1)), "n_rows": len(X),
        "n_drawable": drawable, "n_features": int(X.shape[1]), "itemsize": X.itemsize,
        "weighted": w is not None, "weight_total": total})}), reply_to=msg)


@client_app.train()
def _train(msg: Message, context: Context) -> Message:
    step = str(msg.content["config"]["step"])
    X, w = _device_rows(context)
    est = _estimator(context)
    if step == "kfed.local":
        content = _kfed_local(est, X, w, msg.content, context)
    elif step == "kfed.ids":
        content = _kfed_ids(msg.content, context, X, w)
    elif step == "fedkmeans.reports":
        content = RecordDict({"feature_range": ArrayRecord({
            "low": _array(X.min(axis=0)), "high": _array(X.max(axis=0))})})
    elif step == "fedkmeans.round":
        content = _fedkmeans_round(est, X, w, msg.content)
    elif step == "localkmeans.round":
        content = _localkmeans_round(X, w, msg.content)
    else:
        raise ValueError(f"unknown step {step!r}")
    return Message(content, reply_to=msg)


@client_app.evaluate()
def _evaluate(msg: Message, context: Context) -> Message:
    X, w = _device_rows(context)
    record = "evaluate" if "evaluate" in msg.content.array_records else "centers"
    centers = msg.content[record]["centers"].numpy().astype(X.dtype, copy=False)
    return Message(_cost_record(kmeans_cost(X, centers, sample_weight=w)), reply_to=msg)


def _kfed_local(est: KFed, X, w, content: RecordDict, context: Context) -> RecordDict:
    """Algorithm 1 on this device's rows with the draws the server sent."""
    config = content["config"]
    arrays = content["draws"] if "draws" in content.array_records else {}
    draws = None
    if "uniforms" in arrays:
        draws = LocalDraws(seeded=np.array([int(config["seeded"])]),
                           start=arrays["start"].numpy() if "start" in arrays else None,
                           uniforms=arrays["uniforms"].numpy())
    elif int(config["seeded"]) > 0:  # drawing here would not be the fit's draws
        raise ValueError("the server sent no draws for a device that seeds its clusters")
    federation = _one_device(X, w)
    local = awasthi_sheffet(federation, np.array([int(config["k_prime"])]), draws=draws,
                            proximity_ratio=est.proximity_ratio,
                            projection=bool(est.local_projection),
                            local_means=est.local_means, max_iter=est.local_max_iter)
    slots = np.flatnonzero(local.valid[0])
    # kept for the cluster identities the server sends back
    context.state["kfed"] = ArrayRecord({"slots": _array(slots),
                                         "labels": _array(federation.to_original_order(
                                             local.labels))})
    records = {"local_centers": ArrayRecord({"centers": _array(local.centers[0, slots])})}
    if est.server_weighting == "size":
        sizes = local.sizes[0, slots]
        records["local_sizes"] = ArrayRecord({"sizes": _array(
            sizes if w is not None else sizes.astype(np.int64))})
    return RecordDict(records)


def _kfed_ids(content: RecordDict, context: Context, X, w) -> RecordDict:
    """The induced clustering of this device's rows (Definition 3.3) from the cluster of
    every local centre, and its cost under the global centres that came along."""
    ids = content["cluster_ids"]["ids"].numpy()
    kept = context.state["kfed"]
    slots, labels = kept["slots"].numpy(), kept["labels"].numpy()
    # -1: a slot that formed no cluster (its rows, of weight 0, take the nearest centre)
    global_of_slot = np.full(max(int(labels.max(initial=-1)), int(slots.max(initial=-1))) + 1,
                             -1, dtype=np.int64)
    global_of_slot[slots] = ids
    induced = global_of_slot[labels]
    centers = content["evaluate"]["centers"].numpy().astype(X.dtype, copy=False)
    unplaced = induced < 0
    if unplaced.any():  # rows of weight 0 form no local cluster: their nearest centre
        induced[unplaced] = assign(X[unplaced], centers)[0]
    return _cost_record(labelled_cost(X, centers, induced, w))


def _cost_record(cost: float) -> RecordDict:
    return RecordDict({"evaluate": ConfigRecord({"cost": float(cost)})})


def _fedkmeans_round(est: FederatedKMeans, X, w, content: RecordDict) -> RecordDict:
    """``ClientKMeans`` on this client's rows from the server's centroids."""
    centers = content["centers"]["centers"].numpy()
    # batch_size=None (checked by the server): one batch per epoch, no random draw
    sizes, own = est.client_step(_one_device(X, w), np.array([0]), centers, rng=None)
    counts = sizes[0] if w is not None else sizes[0].astype(np.int64)
    return RecordDict({"client_centers": ArrayRecord({"centers": _array(own[0])}),
                       "client_counts": ArrayRecord({"counts": _array(counts)})})


def _localkmeans_round(X, w, content: RecordDict) -> RecordDict:
    """``n_steps`` local Lloyd steps on this machine's rows from the global centres."""
    centers = content["centers"]["centers"].numpy()
    machine_centers, totals = local_lloyd_steps(_one_device(X, w), centers,
                                                int(content["config"]["n_steps"]))
    counts = totals[0] if w is not None else totals[0].astype(np.int64)
    return RecordDict({"local_centers": ArrayRecord({"centers": _array(machine_centers[0])}),
                       "local_counts": ArrayRecord({"counts": _array(counts)})})


# ---------------------------------------------------------------------------- server side
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
            "start_device": devices[start].device, "costs": costs}


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
        est = _estimator(context)
        est._validate_params()
        est._check_params()
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


# ---------------------------------------------------------------------------- the app folder
_PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "fedclust-flower"
version = "1.0.0"
description = "fedclust's federated k-means estimators as a Flower app"
license = "MIT"
dependencies = ["flwr==1.42.0"]

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "fedclust"

[tool.flwr.app.components]
serverapp = "{module}:server_app"
clientapp = "{module}:client_app"

[tool.flwr.app.config]
# the estimator (kfed, fedkmeans) and its parameters as JSON
algorithm = "kfed"
params = "{{}}"
# the SuperNodes the server waits for, where it writes its result (on its machine)
n-devices = 2
result-path = "result.json"
# seconds the server waits for one exchange's replies (then a device is lost), and for the
# SuperNodes to connect and describe themselves
round-timeout = 60.0
connect-timeout = 120.0
# the launcher's fault hook (a JSON file), empty otherwise
spec = ""
"""


def write_app(directory) -> Path:
    """Write the Flower app folder (``pyproject.toml`` and a module naming this module's
    ``server_app`` and ``client_app``) that ``flwr run`` bundles; the SuperLink's and the
    SuperNodes' machines need fedclust (with the ``flower`` extra) installed."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text(_PYPROJECT.format(module=_APP_MODULE))
    (directory / f"{_APP_MODULE}.py").write_text(
        '"""fedclust\'s Flower app: the components live in fedclust.runtime.flower."""\n\n'
        "from fedclust.runtime.flower import client_app, server_app\n\n"
        '__all__ = ["client_app", "server_app"]\n')
    return directory


@dataclass
class FlowerRun:
    """What one Flower run returned (the server's result file) and what the launcher
    measured on the wire."""

    result: dict
    wire: list
    wall_s: float


# ---------------------------------------------------------------------------- the launcher
def _refused_starts(workdir) -> str:
    """A sentence for a failed run's error: which of its logs (``superlink.log``,
    ``supernode-*.log`` in ``workdir``) show Flower refusing an app process that asked for its
    task after the start window (:data:`_TOKEN_REFUSED`), and what that means; empty if none
    do."""
    refused = [path.name for path in sorted(Path(workdir).glob("super*.log"))
               if _TOKEN_REFUSED in path.read_text(errors="replace")]
    if not refused:
        return ""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
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
    from .processes import free_port, wait_for_port

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
    from .processes import CountingRelay, ProcessGroup

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
    env = {**os.environ, "FLWR_HOME": str(home),
           "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}
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


# ---------------------------------------------------------------------------- measurements
def fit_in_process(algorithm: str, params: dict, X, devices, *, sample_weight=None):
    """The estimator the Flower app runs, fitted in this process with the same parameters
    (the same ``random_state``): the reference the run is compared with."""
    return ALGORITHMS[algorithm](**params).fit(X, devices=devices, sample_weight=sample_weight)


def measurements(run: FlowerRun, fitted, *, algorithm: str) -> pd.DataFrame:
    """One tidy table of a run (one row per measurement): ``algorithm, n_nodes,
    lost_devices, scope, key, metric, value``; ``scope`` is ``run`` (``key`` empty),
    ``device`` (``key`` the device id) or ``exchange`` (``key`` the exchange and round).

    Run metrics: ``centers_max_abs_diff`` against ``fitted`` (the in-process fit),
    ``cost_flower`` (the devices' k-means cost of their rows, summed), ``cost_in_process``
    (``inertia_``), ``cost_rel_diff``; the ledger's columns (``ledger_<column>``,
    :meth:`fedclust.communication.Communication.ledger`); Flower's payload, as its
    ``message_size_mod`` counts it, split by record: ``payload_ledger_bytes`` (the records
    of the ledger's message kinds, with ``_up``/``_down``), ``payload_draws_bytes`` (k-FED's
    shipped random draws), ``payload_config_bytes`` (the step names), ``payload_bytes`` (all
    three: what the algorithm sent), ``control_bytes`` (device sizes, final centres and
    costs: what the simulator knows without a message), ``payload_messages`` and
    ``payload_bytes_per_message``; the ratios ``payload_ledger_over_ledger`` (the
    serialization's overhead on the ledger's records) and ``payload_over_ledger``; the wire
    (a counting relay between each SuperNode and the SuperLink: every byte of its TCP
    streams, HTTP framing, polling and heartbeats included): ``wire_bytes`` (``_up``,
    ``_down``), ``wire_connections`` and ``wire_over_payload`` (over payload and control
    bytes); ``wall_s`` (launch to stop), ``server_wall_s``, ``exchanges`` (the algorithm's
    message exchanges) and ``wall_s_per_round`` (their wall time over the ledger's rounds),
    ``devices_lost``.
    """
    result = run.result
    messages = pd.DataFrame(result["messages"], columns=["exchange", "round", "device",
                                                         "direction", "record", "bytes"])
    lost = ";".join(str(d) for d in result["lost_devices"])
    n_nodes = len(run.wire)
    rows = []

    def add(metric, value, scope="run", key=""):
        rows.append({"algorithm": algorithm, "n_nodes": n_nodes, "lost_devices": lost,
                     "scope": scope, "key": str(key), "metric": metric,
                     "value": float(value)})

    centers = np.asarray(result["centers"])
    add("centers_max_abs_diff", np.abs(centers - fitted.cluster_centers_).max())
    add("cost_flower", result["cost"])
    add("cost_in_process", fitted.inertia_)
    add("cost_rel_diff", abs(result["cost"] - fitted.inertia_) / max(fitted.inertia_, 1e-300))
    ledger = fitted.communication_.ledger()
    for column, value in ledger.items():
        add(f"ledger_{column}", value)
    kind = np.select([messages["record"].isin(LEDGER_RECORDS), messages["record"] == "draws",
                      messages["record"] == "config", messages["record"].isin(CONTROL_RECORDS)],
                     ["ledger", "draws", "config", "control"], "other")
    messages = messages.assign(kind=kind)
    by_kind = messages.groupby("kind")["bytes"].sum()
    for direction in ("up", "down"):
        add(f"payload_ledger_bytes_{direction}", messages.loc[
            (messages["kind"] == "ledger") & (messages["direction"] == direction), "bytes"].sum())
    payload = sum(by_kind.get(k, 0) for k in ("ledger", "draws", "config", "other"))
    add("payload_ledger_bytes", by_kind.get("ledger", 0))
    add("payload_draws_bytes", by_kind.get("draws", 0))
    add("payload_config_bytes", by_kind.get("config", 0))
    add("payload_bytes", payload)
    add("control_bytes", by_kind.get("control", 0))
    algorithmic = messages[messages["kind"] != "control"]
    n_messages = len(algorithmic.groupby(["exchange", "round", "device", "direction"]))
    add("payload_messages", n_messages)
    add("payload_bytes_per_message", payload / max(n_messages, 1))
    if ledger["bytes"] > 0:
        add("payload_ledger_over_ledger", by_kind.get("ledger", 0) / ledger["bytes"])
        add("payload_over_ledger", payload / ledger["bytes"])
    wire_up = sum(w["bytes_up"] for w in run.wire)
    wire_down = sum(w["bytes_down"] for w in run.wire)
    add("wire_bytes", wire_up + wire_down)
    add("wire_bytes_up", wire_up)
    add("wire_bytes_down", wire_down)
    add("wire_connections", sum(w["connections"] for w in run.wire))
    add("wire_over_payload", (wire_up + wire_down) / max(payload + by_kind.get("control", 0), 1))
    for wire in run.wire:
        add("wire_bytes_up", wire["bytes_up"], "device", wire["device"])
        add("wire_bytes_down", wire["bytes_down"], "device", wire["device"])
        add("wire_connections", wire["connections"], "device", wire["device"])
    algorithmic = [e for e in result["exchanges"] if e["exchange"] not in CONTROL_EXCHANGES]
    add("wall_s", run.wall_s)
    add("server_wall_s", result["wall_s"])
    add("exchanges", len(algorithmic))
    # a round as the ledger counts them (k-FED's one round is two exchanges: up, then down)
    add("wall_s_per_round", sum(e["wall_s"] for e in algorithmic) / max(ledger["rounds"], 1))
    for exchange in result["exchanges"]:
        add("wall_s", exchange["wall_s"], "exchange",
            f"{exchange['exchange']}-{exchange['round']}")
    add("devices_lost", len(result["lost_devices"]))
    return pd.DataFrame(rows)


#: The rows of :func:`summary_markdown`: label, metric of :func:`measurements`, format.
SUMMARY_ROWS = (
    ("centres: max abs diff vs in-process", "centers_max_abs_diff", "{:.1e}"),
    ("cost: relative diff vs in-process", "cost_rel_diff", "{:.1e}"),
    ("ledger rounds", "ledger_rounds", "{:,.0f}"),
    ("ledger bytes", "ledger_bytes", "{:,.0f}"),
    ("payload: ledger's records", "payload_ledger_bytes", "{:,.0f}"),
    ("  \u2026 over ledger", "payload_ledger_over_ledger", "{:.2f}"),
    ("payload: all the algorithm sends", "payload_bytes", "{:,.0f}"),
    ("  of which k-FED's draws", "payload_draws_bytes", "{:,.0f}"),
    ("payload bytes per message", "payload_bytes_per_message", "{:,.0f}"),
    ("control (sizes, final centres, costs)", "control_bytes", "{:,.0f}"),
    ("wire bytes (all SuperNodes' TCP streams)", "wire_bytes", "{:,.0f}"),
    ("  \u2026 over payload + control", "wire_over_payload", "{:.0f}"),
    ("wall s per ledger round", "wall_s_per_round", "{:.1f}"),
    ("wall s, launch to stop", "wall_s", "{:.0f}"),
    ("devices lost", "devices_lost", "{:.0f}"),
)


def summary_markdown(table: pd.DataFrame) -> str:
    """The run-level rows of :func:`measurements` tables (one or several runs) as one Markdown
    table, a column per run (``algorithm, N=n`` and the killed devices), the rows of
    :data:`SUMMARY_ROWS`: what the README shows, rendered from the CSV rather than typed."""
    runs = table[table["scope"] == "run"].copy()
    runs["lost_devices"] = runs["lost_devices"].fillna("").astype(str)
    # the vocabulary's order of algorithms (as the figure), each run without losses first
    order = runs[["algorithm", "n_nodes", "lost_devices"]].drop_duplicates()
    order = order.assign(killed=order["lost_devices"] != "").sort_values(
        ["algorithm", "n_nodes", "killed", "lost_devices"], kind="stable").sort_values(
        "algorithm", key=algorithm_rank, kind="stable").drop(columns="killed")
    wide = runs.pivot_table(index=["algorithm", "n_nodes", "lost_devices"], columns="metric",
                            values="value", aggfunc="first")
    heads, columns = [], []
    for algorithm, n_nodes, lost in order.itertuples(index=False):
        lost_text = f", {lost.replace(';', ', ')} killed" if lost else ""
        heads.append(f"{algorithm}, N={int(n_nodes)}{lost_text}")
        columns.append(wide.loc[(algorithm, n_nodes, lost)])
    lines = ["| | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for label, metric, fmt in SUMMARY_ROWS:
        cells = [fmt.format(col[metric]) if metric in col and pd.notna(col[metric]) else "\u2013"
                 for col in columns]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- command line
#: Each algorithm's parameters in the demonstration runs (``random_state`` added per run).
DEMO_PARAMS = {
    "kfed": {"n_clusters": 4, "device_clusters": 2},
    "fedkmeans": {"n_clusters": 4, "n_rounds": 3, "init": "uniform", "sample_fraction": 0.75},
    "localkmeans": {"n_clusters": 4, "local_steps": 2, "n_iter": 6},
    "distributed_lloyd": {"n_clusters": 4, "max_iter": 20},
}


#: Where the fault runs kill a SuperNode: k-FED before its one round (the local step),
#: federated k-means before round 2 (after a round with every client).
KILL_BEFORE = {"kfed": {"exchange": "local", "round": 1},
               "fedkmeans": {"exchange": "round", "round": 2},
               "localkmeans": {"exchange": "round", "round": 2},
               "distributed_lloyd": {"exchange": "round", "round": 2}}


def demo_federation(n_devices: int, *, n_clusters: int = 4, rows_per_device: int = 100,
                    n_features: int = 5, random_state=0):
    """A Gaussian mixture of ``n_clusters`` well-separated clusters in which device ``z``
    holds rows of clusters ``z`` and ``z + 1`` (mod ``n_clusters``): k-FED's structured
    setting, two clusters per device. Returns ``X, devices``."""
    rng = np.random.default_rng(random_state)
    means = 8.0 * rng.standard_normal((n_clusters, n_features))
    devices = np.repeat(np.arange(n_devices), rows_per_device)
    cluster = (devices + rng.integers(0, 2, len(devices))) % n_clusters
    return means[cluster] + rng.standard_normal((len(devices), n_features)), devices


def demo_params(algorithm: str, X, *, random_state: int = 0) -> dict:
    """:data:`DEMO_PARAMS` of ``algorithm`` with ``random_state``; LocalKMeans starts from
    ``n_clusters`` rows of ``X`` drawn at random (the app takes given centres)."""
    params = {**DEMO_PARAMS[algorithm], "random_state": random_state}
    if algorithm in ("localkmeans", "distributed_lloyd"):
        rows = np.random.default_rng(random_state).choice(len(X), params["n_clusters"],
                                                          replace=False)
        params["init"] = np.asarray(X)[rows].tolist()
    return params


def run_and_measure(algorithm: str, *, n_devices: int, random_state: int = 0,
                    params: dict | None = None, kill: dict | None = None,
                    round_timeout: float = 60.0, workdir=None) -> pd.DataFrame:
    """One demonstration run (:func:`demo_federation`, :data:`DEMO_PARAMS`) on Flower and
    in process, measured (:func:`measurements`)."""
    X, devices = demo_federation(n_devices, random_state=random_state)
    params = {**demo_params(algorithm, X, random_state=random_state), **(params or {})}
    # fitted first: the in-process fit compiles the numba kernels into the source tree's
    # cache, which the ClientApp processes load instead of each compiling them
    fitted = fit_in_process(algorithm, params, X, devices)
    run = launch(algorithm, params, X, devices, kill=kill, round_timeout=round_timeout,
                 workdir=workdir)
    return measurements(run, fitted, algorithm=algorithm)


def main(argv=None) -> int:
    """``python -m fedclust.runtime.flower run|write-app ...`` (``--help`` for each)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m fedclust.runtime.flower",
                                     description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run algorithms on a SuperLink and N SuperNodes on "
                              "this machine and write the measurements (one tidy CSV)")
    run.add_argument("--algorithm", nargs="+", choices=sorted(ALGORITHMS),
                     default=sorted(ALGORITHMS))
    run.add_argument("--nodes", type=int, default=4, help="SuperNodes (devices), default 4")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--round-timeout", type=float, default=60.0)
    run.add_argument("--kill-device", type=int, default=None,
                     help="kill this device's SuperNode mid-fit (the fault run): before "
                          "k-FED's round, before federated k-means' round 2")
    run.add_argument("--out", required=True, help="the CSV to write")
    run.add_argument("--workdir", default=None, help="keep partitions, app and logs here")
    app = commands.add_parser("write-app", help="write the Flower app folder that `flwr run` "
                              "submits to a SuperLink")
    app.add_argument("directory")
    summary = commands.add_parser("summary", help="print the run-level measurements of one or "
                                  "more `run` CSVs as one Markdown table (the README's)")
    summary.add_argument("csv", nargs="+")
    split = commands.add_parser("partition", help="split a data set into one .npz per device "
                                "(a SuperNode's data-path)")
    split.add_argument("data", help=".npz with arrays X and devices (and w, optional)")
    split.add_argument("directory")
    args = parser.parse_args(argv)
    if args.command == "write-app":
        print(write_app(args.directory))
        return 0
    if args.command == "summary":
        print(summary_markdown(pd.concat([pd.read_csv(path, dtype={"lost_devices": str})
                                           for path in args.csv],
                                         ignore_index=True)), end="")
        return 0
    if args.command == "partition":
        with np.load(args.data) as data:
            missing = {"X", "devices"} - set(data.files)
            if missing:
                parser.error(f"{args.data} lacks the arrays {sorted(missing)} (it has "
                             f"{sorted(data.files)})")
            Path(args.directory).mkdir(parents=True, exist_ok=True)
            files = write_partitions(data["X"], data["devices"],
                                     data["w"] if "w" in data.files else None, args.directory)
        for device, path in files:
            print(f"device {device}: {path}")
        return 0
    if args.nodes < 1:
        parser.error(f"--nodes must be >= 1; got {args.nodes}")
    tables = []
    for algorithm in args.algorithm:
        kill = None if args.kill_device is None else \
            {"device": args.kill_device, **KILL_BEFORE[algorithm]}
        workdir = None if args.workdir is None else Path(args.workdir) / algorithm
        tables.append(run_and_measure(algorithm, n_devices=args.nodes, random_state=args.seed,
                                      kill=kill, round_timeout=args.round_timeout,
                                      workdir=workdir))
        print(f"{algorithm}: done", file=sys.stderr)
    table = pd.concat(tables, ignore_index=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"wrote {out} ({len(table)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

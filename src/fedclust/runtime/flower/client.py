"""The client side: a SuperNode's ClientApp, which runs the estimators' device steps on its own
rows (k-FED's local clustering, federated k-means' ``client_step``, LocalKMeans' local Lloyd
steps) and answers the server.
"""

from __future__ import annotations

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.clientapp.mod import message_size_mod

from ...algorithms.federated_kmeans import FederatedKMeans
from ...algorithms.kfed import KFed, LocalDraws, awasthi_sheffet
from ...algorithms.local_kmeans import local_lloyd_steps
from ...federation import Federation
from ...lloyd import assign
from ...metrics import kmeans_cost, labelled_cost
from .protocol import _array, estimator_of


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
    est = estimator_of(context)
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



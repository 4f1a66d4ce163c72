"""k-FED's applications (Dennis, Li & Smith, 2021, Sec. 4.2.2 and App. B.1) as experiments, in
tidy tables: Table 2's personalized models on rotated MNIST (:func:`table2_runs`: one global
FedAvg model, IFCA, k-FED + FedAvg) and Figure 4's client selection for one global model on
FEMNIST and Shakespeare (:func:`fig4_runs`: random by size, pow-d, k-FED + pow-d). Each method,
and the seeds that compare the methods of a run on the same data: docs/algorithms.md, *k-FED's
applications*.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ...algorithms import KFed
from ...exceptions import InfeasibleSettingError
from ...fl.clusters import route_by_local_centers, segments_of
from ...fl.data import DeviceStore, as_model_input, rotate_images, split_per_device
from ...fl.models import build_model
from ...fl.selection import (
    SELECTIONS,
    KFedPowerOfChoice,
    PowerOfChoice,
    RandomBySize,
    device_cluster_of,
)
from ...fl.training import FederatedTrainer
from ...io import skipped_with_warning, tidy
from ...metrics import clustering_accuracy
from ...partitions import every_pair_partition, powerlaw_class_partition, structured_partition
from ...seeds import seed_for
from .synthetic import PRINTED_KFED

__all__ = ["FLData", "MethodRun", "build_trainer", "prepare_method", "rotated_mnist",
           "table2_runs", "table2_cells", "femnist_powerlaw", "shakespeare_roles", "fig4_data",
           "fig4_runs", "train_method", "TABLE2_METHODS", "PAIRINGS"]

log = logging.getLogger(__name__)

#: Table 2's methods, as the tables name them.
TABLE2_METHODS = ("global", "ifca", "kfed")
#: How k' = 2 pairs the four rotations (not in the paper): adjacent rotations (0+90,
#: 180+270), opposite ones (0+180, 90+270), a random pairing per run -- each a fixed split
#: of the rotations into two pairs, every device holding one of them -- or ``every_pair``:
#: the devices hold the six pairs in turn (device ``z`` the ``z mod 6``-th), so that devices
#: sharing a rotation need not share the other one.
PAIRINGS = {"adjacent": [0, 0, 1, 1], "opposite": [0, 1, 0, 1], "random": None,
            "every_pair": "every_pair"}


@dataclass
class FLData:
    """Train and test rows of one federation: model inputs, targets, device positions
    (``0 .. n_devices - 1``), the cluster of every row (rotation; -1 when none) and the
    features k-FED clusters (``kfed_X``, training rows)."""

    X: np.ndarray
    y: np.ndarray
    devices: np.ndarray
    test_X: np.ndarray
    test_y: np.ndarray
    test_devices: np.ndarray
    clusters: np.ndarray
    kfed_X: np.ndarray
    kfed_test_X: np.ndarray | None = None

    @property
    def n_devices(self) -> int:
        return int(self.devices.max()) + 1


# ------------------------------------------------------------------------------ Table 2
def rotated_mnist(train, test, *, n_devices: int, device_clusters: int, pairing: str,
                  per_rotation: int, test_per_rotation: int, seed: int) -> FLData:
    """Rotated MNIST dealt to ``n_devices`` devices with ``device_clusters`` rotations each.

    As in Ghosh et al.'s code, which k-FED follows (reconstructed): every rotation holds its
    own random ``per_rotation`` of the training images (and ``test_per_rotation`` of the test
    images) turned by its angle. The rotations are grouped ``k'`` at a time (``pairing``) and
    each group's rows are dealt evenly over ``n_devices * k' / 4`` devices of its own
    (:func:`~fedclust.partitions.structured_partition`, Sec. 4.1's construction); test rows
    go to the same devices, so each device is tested on its own rotations.
    """
    k = 4
    if device_clusters not in (1, 2, 4) or (n_devices * device_clusters) % k:
        raise InfeasibleSettingError(
            f"n_devices={n_devices} and device_clusters={device_clusters}: the 4 rotations "
            f"form groups of k' and n_devices * k' / 4 must be a whole number of devices")
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {sorted(PAIRINGS)}; got {pairing!r}")
    every_pair = pairing == "every_pair" and device_clusters == 2
    if every_pair and n_devices < 6:
        raise InfeasibleSettingError(
            f"n_devices={n_devices}: pairing 'every_pair' needs a device for each of the 6 "
            f"pairs of rotations")
    rng = np.random.default_rng(seed)
    groups = PAIRINGS[pairing] if device_clusters == 2 and not every_pair else None
    if groups is None:
        groups = rng.permutation(np.arange(k) // device_clusters)
    parts = []
    for (X, y), n in ((train, per_rotation), (test, test_per_rotation)):
        if n > len(X):
            raise ValueError(f"{n} images per rotation asked; the split has {len(X)}")
        rows = [rng.permutation(len(X))[:n] for _ in range(k)]
        X_rot = np.concatenate([rotate_images(X[r], turn) for turn, r in enumerate(rows)])
        y_rot = np.concatenate([y[r] for r in rows])
        rotation = np.repeat(np.arange(k), n)
        devices = (every_pair_partition(rotation, n_devices, rng) if every_pair else
                   structured_partition(rotation, device_clusters,
                                        n_devices * device_clusters // k, rng, groups=groups))
        parts.append((X_rot, y_rot, devices, rotation))
    (X, y, devices, rotation), (tX, ty, tdev, _) = parts
    return FLData(X, y, devices, tX, ty, tdev, rotation, X, tX)


def _per_device_mean(values, devices, n_devices) -> np.ndarray:
    counts = np.bincount(devices, minlength=n_devices)
    sums = np.bincount(devices, weights=values, minlength=n_devices)
    return np.divide(sums, counts, out=np.full(n_devices, np.nan), where=counts > 0)


def _majority(labels, devices, n_devices) -> np.ndarray:
    table = np.zeros((n_devices, int(labels.max()) + 1))
    np.add.at(table, (devices, labels), 1)
    return table.argmax(1)


def _capped(devices, cap, seed: int) -> np.ndarray:
    """Rows kept for evaluation: at most ``cap`` per device, at random (None keeps all)."""
    if cap is None:
        return np.arange(len(devices))
    key = np.random.default_rng(seed).random(len(devices))
    order = np.lexsort((key, devices))
    _, first, counts = np.unique(devices[order], return_index=True, return_counts=True)
    rank = np.arange(len(devices)) - np.repeat(first, counts)
    return np.sort(order[rank < cap])


def _fit_kfed(data: FLData, params: dict, seed: int) -> KFed:
    return KFed(n_clusters=params["n_clusters"], device_clusters=params["device_clusters"],
                server_lloyd_rounds=params["server_lloyd_rounds"],
                server_starts=params["server_starts"], **PRINTED_KFED,
                random_state=seed_for(seed, "kfed")).fit(data.kfed_X, devices=data.devices)


def _selection(name: str, cfg: dict, km: KFed | None):
    """The selection rule ``name``; k-FED + pow-d filters by the clusters of ``km``."""
    m = cfg["devices_per_round"]
    if name == "random":
        return RandomBySize(m)
    if name == "powd":
        return PowerOfChoice(m, cfg["candidates"])
    return KFedPowerOfChoice(m, cfg["candidates"], device_cluster_of(km))


def build_trainer(cfg: dict) -> FederatedTrainer:
    """The trainer of a Table 2 or Fig 4 setting ``cfg`` (its model, local SGD, aggregation
    and ``device``, default the CPU)."""
    return FederatedTrainer(build_model(cfg["model"], **cfg["model_options"]),
                            lr=cfg["lr"], local_steps=cfg["local_steps"],
                            batch_size=cfg["batch_size"], aggregation=cfg["aggregation"],
                            loss_rows=cfg["loss_rows"], device=cfg.get("device", "cpu"))


@dataclass
class MethodRun:
    """One method's run made ready to train: the keyword arguments of
    :meth:`~fedclust.fl.training.FederatedTrainer.run` (``job``, the store included) and
    what :meth:`finish` needs afterwards."""

    job: dict
    extra: dict
    final: dict
    rounds: int
    restart_rounds: int

    def finish(self, result):
        """The :func:`train_method` triple from the trained ``result``."""
        extra = dict(self.extra)
        extra["floats_down_per_round"] = result.communication["floats_down"] / self.rounds
        extra["floats_up_per_round"] = result.communication["floats_up"] / self.rounds
        # the protocol's own cost per round, once IFCA's restarts (our addition) are over
        extra["floats_down_per_training_round"] = _per_round(result.history, "floats_down",
                                                             self.restart_rounds)
        if result.restart_scores:
            extra["ifca_restart_kept"] = float(result.restart_kept)
            extra["ifca_restart_objective_kept"] = min(result.restart_scores)
            extra["ifca_restart_objective_worst"] = max(result.restart_scores)
        return result, self.final["per_device"], extra


def prepare_method(data: FLData, cfg: dict, trainer: FederatedTrainer, *,
                   method: str = "global", selection: str = "random",
                   kfed: dict | None = None, seed: int, store: DeviceStore | None = None
                   ) -> MethodRun:
    """Everything of :func:`train_method` before the rounds: k-FED's clustering where the
    method or the selection uses it, the store, the selection and the evaluation.

    ``store``: the rows of ``data`` by device, on the trainer's device (built when not given;
    the methods of one run can share it, except k-FED's, which stores by cluster)."""
    if method not in TABLE2_METHODS:
        raise ValueError(f"method must be one of {list(TABLE2_METHODS)}; got {method!r}")
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {list(SELECTIONS)}; got {selection!r}")
    device = trainer.device
    if store is None:
        store = DeviceStore.from_arrays(data.X, data.y, data.devices).to(device)
    zeros = (np.zeros(len(data.y), dtype=np.int64), np.zeros(len(data.test_y), dtype=np.int64),
             {})
    routes = lambda models: zeros                                   # noqa: E731
    run = {"n_models": 1}
    extra = {"model_floats": float(trainer.stacked.n_parameters)}

    km = None
    if method == "kfed" or selection == "kfed_powd":
        km = _fit_kfed(data, kfed, seed)
        extra.update(kfed_floats_up=float(km.communication_["floats_up"]),
                     kfed_floats_down=float(km.communication_["floats_down"]))
        if (data.clusters >= 0).all():
            extra["kfed_cluster_accuracy"] = clustering_accuracy(data.clusters, km.labels_)
    chooser = _selection(selection, cfg, km)
    if selection == "kfed_powd":
        extra["kfed_device_clusters_used"] = float(len(np.unique(chooser.clusters)))
    if method == "kfed":
        segment, seg_device, seg_group = segments_of(data.devices, km.labels_)
        store = DeviceStore.from_arrays(data.X, data.y, segment).to(device)
        routed = (km.labels_, route_by_local_centers(km, data.kfed_test_X, data.test_devices),
                  {})
        routes = lambda models: routed                              # noqa: E731
        run = {"n_models": kfed["n_clusters"], "segment_device": seg_device,
               "segment_group": seg_group}
    elif method == "ifca":
        eval_gen = torch.Generator()
        true_group = (_majority(data.clusters, data.devices, data.n_devices)
                      if (data.clusters >= 0).all() else None)
        device_store = store

        def routes(models):    # every device picks its model on its own training rows
            eval_gen.manual_seed(seed_for(seed, "evaluation"))
            choice = trainer.choose_models(models, device_store,
                                           np.arange(device_store.n_segments), eval_gen)
            # identity accuracy of every device's choice (not only a round's devices)
            metrics = {"ifca_models_used": float(len(np.unique(choice)))}
            if true_group is not None:
                metrics["identity_accuracy"] = clustering_accuracy(true_group, choice)
            return choice[data.devices], choice[data.test_devices], metrics

        run = {"n_models": kfed["n_clusters"], "ifca": True, "true_group": true_group,
               "restarts": cfg.get("ifca_restarts", 1),
               "restart_rounds": cfg.get("ifca_restart_rounds", 1)}

    # evaluation rows: every row, or at most eval_*_rows per device (a fixed random subset)
    train_rows = _capped(data.devices, cfg["eval_train_rows"], seed_for(seed, "eval rows"))
    test_rows = _capped(data.test_devices, cfg["eval_test_rows"], seed_for(seed, "eval rows"))
    X_t = as_model_input(data.X[train_rows]).to(device)
    y_t = torch.from_numpy(data.y[train_rows].astype(np.int64)).to(device)
    test_X_t = as_model_input(data.test_X[test_rows]).to(device)
    test_y_t = torch.from_numpy(data.test_y[test_rows].astype(np.int64)).to(device)
    final = {}

    def evaluate(models):
        rows, test, metrics = routes(models)
        loss, _ = trainer.stacked.evaluate(models, X_t, y_t, rows[train_rows])
        _, correct = trainer.stacked.evaluate(models, test_X_t, test_y_t, test[test_rows])
        final["per_device"] = _per_device_mean(correct.astype(float),
                                               data.test_devices[test_rows], data.n_devices)
        return {"test_accuracy": float(correct.mean()),
                "test_accuracy_device_mean": float(np.nanmean(final["per_device"])),
                "train_loss": float(loss.mean()), **metrics}

    job = {"train": store, "rounds": cfg["rounds"], "selection": chooser, "seed": seed,
           "evaluate": evaluate, "eval_every": cfg["eval_every"], **run}
    after = run.get("restart_rounds", 0) if run.get("restarts", 1) > 1 else 0
    return MethodRun(job, extra, final, cfg["rounds"], after)


def train_method(data: FLData, cfg: dict, *, method: str = "global",
                 selection: str = "random", kfed: dict | None = None, seed: int,
                 desc: str = "training"):
    """Train one method on ``data`` and evaluate it every ``cfg["eval_every"]`` rounds.

    ``method``: ``global`` (one FedAvg model), ``ifca`` (``kfed["n_clusters"]`` models) or
    ``kfed`` (one model per k-FED cluster); ``selection``: ``random``, ``powd`` or
    ``kfed_powd`` (the last fits k-FED first, with ``kfed``'s parameters); ``cfg["device"]``
    (default ``"cpu"``) where the models train. Returns the
    :class:`~fedclust.fl.training.TrainingResult`, the final per-device test accuracy and a
    dict of the run's other numbers (k-FED's one-shot communication and cluster accuracy).
    """
    trainer = build_trainer(cfg)
    prepared = prepare_method(data, cfg, trainer, method=method, selection=selection,
                              kfed=kfed, seed=seed)
    return prepared.finish(trainer.run(**prepared.job, desc=desc))


def _per_round(history: list[dict], key: str, after: int) -> float:
    """``key``'s growth per round between the first and the last evaluated rounds past round
    ``after`` (NaN when fewer than two are)."""
    rows = [row for row in history if row["round"] > after] if after else history
    if len(rows) < 2:
        return math.nan
    return (rows[-1][key] - rows[0][key]) / (rows[-1]["round"] - rows[0]["round"])


def _long(records: list[dict], id_columns) -> pd.DataFrame:
    """Tidy rows of history records (a metric not measured at a round has no row)."""
    table = tidy(records, id_columns)
    return table[table["value"].notna()].reset_index(drop=True)


TABLE2_IDS = ["n_devices", "device_clusters", "method", "run", "round"]


def _table2_data(train, test, cfg: dict, n_devices: int, device_clusters: int, run: int,
                 base_seed: int) -> FLData:
    return rotated_mnist(
        train, test, n_devices=n_devices, device_clusters=device_clusters,
        pairing=cfg["pairing"], per_rotation=cfg["per_rotation"],
        test_per_rotation=cfg["test_per_rotation"],
        seed=seed_for(base_seed, "kfed", "table2", "data", n_devices, device_clusters, run))


def _table2_method(data: FLData, cfg: dict, trainer, cell: tuple, run: int, base_seed: int,
                   store=None) -> MethodRun:
    n_devices, device_clusters, method = cell
    return prepare_method(
        data, cfg, trainer, method=method,
        kfed={**cfg["kfed"], "n_clusters": 4, "device_clusters": device_clusters},
        seed=seed_for(base_seed, "kfed", "table2", n_devices, device_clusters, run),
        store=store)


def _table2_records(key: dict, cfg: dict, result, extra: dict) -> list[dict]:
    return ([{**key, **row} for row in result.history]
            + [{**key, "round": cfg["rounds"], **extra}])


def table2_runs(train, test, *, n_devices: int, device_clusters: int, method: str, cfg: dict,
                base_seed: int) -> pd.DataFrame:
    """Every run of one Table 2 cell (``n_devices``, ``k'``, ``method``) as a tidy table:
    the evaluation history (``round``; test accuracy pooled and per-device mean, training
    loss, IFCA's identity accuracy, floats and bytes sent so far) and, at the last round,
    the run's other numbers. ``train`` and ``test`` are MNIST's ``(X, y)`` splits."""
    cell = (n_devices, device_clusters, method)
    trainer = build_trainer(cfg)
    records = []
    for run in range(cfg["runs"]):
        key = {"n_devices": n_devices, "device_clusters": device_clusters, "method": method,
               "run": run}
        try:
            data = _table2_data(train, test, cfg, n_devices, device_clusters, run, base_seed)
            prepared = _table2_method(data, cfg, trainer, cell, run, base_seed)
        except InfeasibleSettingError as err:
            records.append(skipped_with_warning({**key, "round": cfg["rounds"]}, err, key, log))
            continue
        result, _, extra = prepared.finish(trainer.run(
            **prepared.job, desc=f"Table 2 {method} Z={n_devices} k'={device_clusters} run {run}"))
        records += _table2_records(key, cfg, result, extra)
    return _long(records, TABLE2_IDS)


def table2_cells(train, test, *, cells, cfg: dict, base_seed: int) -> dict:
    """Every run of several Table 2 cells, trained together: the table :func:`table2_runs`
    gives each cell, from one :meth:`~fedclust.fl.training.FederatedTrainer.run_many`.

    The runs keep their own data, seeds and streams, so each cell's table equals its own
    :func:`table2_runs` up to the rounding of the batched products. The methods of one run
    (Z, k', run) share its data and, on the trainer's device, its rows (k-FED's by cluster).

    Parameters
    ----------
    train, test : (X, y)
        MNIST's splits.
    cells : sequence of (n_devices, device_clusters, method)
    cfg : dict
        Table 2's settings (``device`` among them).
    base_seed : int

    Returns
    -------
    dict
        ``{(n_devices, device_clusters, method): tidy table}``, one per cell.
    """
    cells = [(int(z), int(kp), str(m)) for z, kp, m in cells]
    trainer = build_trainer(cfg)
    records = {cell: [] for cell in cells}
    waiting = []                                       # (cell, key, prepared), in run order
    for n_devices, device_clusters in dict.fromkeys((z, kp) for z, kp, _ in cells):
        methods = [cell for cell in cells if cell[:2] == (n_devices, device_clusters)]
        for run in range(cfg["runs"]):
            try:
                data = _table2_data(train, test, cfg, n_devices, device_clusters, run,
                                    base_seed)
            except InfeasibleSettingError as err:
                data, failure = None, err
            store = None
            for cell in methods:
                key = {"n_devices": n_devices, "device_clusters": device_clusters,
                       "method": cell[2], "run": run}
                by_device = cell[2] != "kfed"             # k-FED's store is by cluster
                try:
                    if data is None:
                        raise failure
                    prepared = _table2_method(data, cfg, trainer, cell, run, base_seed,
                                              store=store if by_device else None)
                    waiting.append((cell, key, prepared))
                    if by_device:
                        store = prepared.job["train"]
                except InfeasibleSettingError as err:
                    records[cell].append(skipped_with_warning(
                        {**key, "round": cfg["rounds"]}, err, key, log))
    if waiting:
        log.info("training %d runs of %d Table 2 cells together on %s", len(waiting),
                 len(cells), trainer.device)
        results = trainer.run_many([prepared.job for _, _, prepared in waiting],
                                   desc=f"Table 2, {len(waiting)} runs together")
        for (cell, key, prepared), result in zip(waiting, results, strict=True):
            result, _, extra = prepared.finish(result)
            records[cell] += _table2_records(key, cfg, result, extra)
    return {cell: _long(sorted(rows, key=lambda r: r["run"]), TABLE2_IDS)
            for cell, rows in records.items()}


# ------------------------------------------------------------------------------ Figure 4
def femnist_powerlaw(X, y, cfg: dict, *, seed: int) -> FLData:
    """FEMNIST's first ``classes`` classes dealt by :func:`powerlaw_class_partition` over
    ``devices`` devices, each device's rows split into train and test (App. B.1)."""
    rng = np.random.default_rng(seed)
    keep = np.flatnonzero(np.asarray(y) < cfg["classes"])
    devices = powerlaw_class_partition(y[keep], cfg["devices"], n_classes=cfg["classes"],
                                       classes_per_device=cfg["classes_per_device"],
                                       base=cfg["base"], sigma=cfg["sigma"], random_state=rng)
    keep, devices = keep[devices >= 0], devices[devices >= 0]
    test = split_per_device(devices, cfg["test_fraction"], rng)
    # LEAF stores ink as 0 and background as 1; the model gets ink as 1 (MNIST's convention,
    # so the constant background does not feed every hidden unit; not in the paper)
    X, y = 1.0 - np.asarray(X, dtype=np.float32)[keep], np.asarray(y)[keep]
    none = np.full((~test).sum(), -1)
    return FLData(X[~test], y[~test], devices[~test], X[test], y[test], devices[test], none,
                  X[~test])


def shakespeare_roles(raw_path, dataset_settings: dict, cfg: dict, *, base_seed: int) -> FLData:
    """Shakespeare, one device per speaking role: the roles and windows of the pipeline's
    Shakespeare data set (``datasets.shakespeare``), the 80 characters of every window as
    the model's input and its next character as the target; each role's last
    ``test_fraction`` of windows (in text order) are its test rows, as LEAF splits by time.
    k-FED clusters the windows' character-frequency features."""
    from ...data.shakespeare import build_shakespeare_dataset, load_shakespeare_users

    text = build_shakespeare_dataset(
        raw_path, n_users=dataset_settings["n_users"],
        max_samples_per_user=dataset_settings["max_samples_per_user"],
        min_samples=dataset_settings["min_samples"],
        random_state=seed_for(base_seed, "data", "shakespeare", "roles"))
    users = load_shakespeare_users(raw_path)
    letters = np.concatenate([
        users.letters(users.user_index(name), text.windows[text.devices == d])[0]
        for d, name in enumerate(text.user_names)])
    test = split_per_device(text.devices, cfg["test_fraction"], order=text.windows)
    none = np.full((~test).sum(), -1)
    return FLData(letters[~test], text.y[~test], text.devices[~test], letters[test],
                  text.y[test], text.devices[test], none, text.X[~test])


def fig4_data(dataset: str, path, cfg: dict, dataset_settings: dict, *,
              base_seed: int) -> FLData:
    """Fig 4's federation of ``dataset``: FEMNIST from its prepared features (``path``),
    Shakespeare from the raw text (``path``) with the roles of ``dataset_settings``."""
    if dataset == "femnist":
        from ...data.prepared import read_prepared

        prepared = read_prepared(path)
        return femnist_powerlaw(prepared.X, prepared.y, cfg,
                                seed=seed_for(base_seed, "kfed", "fig4", "data", dataset))
    if dataset == "shakespeare":
        return shakespeare_roles(path, dataset_settings, cfg, base_seed=base_seed)
    raise ValueError(f"Fig 4 data set must be 'femnist' or 'shakespeare'; got {dataset!r}")


def fig4_runs(dataset: str, strategy: str, data: FLData, cfg: dict, *,
              base_seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run of one Fig 4 curve: the evaluation history (tidy, by ``round``) and the
    final test accuracy and number of test rows of every device with test rows (tidy, by
    ``device``)."""
    ids = ["dataset", "strategy", "run", "round"]
    records, devices = [], []
    for run in range(cfg["runs"]):
        key = {"dataset": dataset, "strategy": strategy, "run": run}
        try:
            result, per_device, extra = train_method(
                data, cfg, method="global", selection=strategy, kfed=cfg["kfed"],
                seed=seed_for(base_seed, "kfed", "fig4", dataset, run),
                desc=f"Fig 4 {dataset} {strategy} run {run}")
        except InfeasibleSettingError as err:
            records.append(skipped_with_warning({**key, "round": cfg["rounds"]}, err, key, log))
            continue
        tested = np.flatnonzero(~np.isnan(per_device))
        extra["device_accuracy_variance"] = float(np.var(per_device[tested]))
        records += [{**key, **row} for row in result.history]
        records.append({**key, "round": cfg["rounds"], **extra})
        n_test = np.bincount(data.test_devices, minlength=data.n_devices)
        if cfg["eval_test_rows"] is not None:
            n_test = np.minimum(n_test, cfg["eval_test_rows"])
        devices += [{**key, "device": int(z), "test_accuracy": float(per_device[z]),
                     "n_test": float(n_test[z])} for z in tested]
    return _long(records, ids), tidy(devices, ["dataset", "strategy", "run", "device"])

"""k-FED on real federated data (Dennis, Li & Smith, ICML 2021, Sec. 4.2.1 and beyond).

Every experiment starts from a data set and its *oracle* clustering with ``k`` clusters
(k-means on all of it, :func:`fedclust.centralized.reference_kmeans`; ``k`` from the
separation analysis of App. B.2) and deals the rows over devices from the oracle labels:
Fig 2 compares k-FED on structured and IID partitions, Fig 3 k-FED against naive distributed
Lloyd, and beyond the paper device failures, devices that join after the fit and a sweep from
the natural partition towards IID. The partitions, the costs and how seeds are named:
``docs/algorithms.md`` (k-FED on real federated data).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..._validation import check_random_state
from ...algorithms import DistributedLloyd, KFed
from ...exceptions import InfeasibleSettingError
from ...io import skipped_with_warning, tidy
from ...metrics import clustering_accuracy, kmeans_cost, partition_cost
from ...partitions import iid_partition, mix_partition, structured_partition, subset_partition
from ...progress import progress
from ...seeds import seed_for
from .synthetic import PRINTED_KFED, device_clusters_for

__all__ = [
    "Oracle",
    "structured_vs_iid",
    "kfed_vs_distributed_lloyd",
    "participation_sweep",
    "new_devices_vs_refit",
    "heterogeneity_sweep",
    "clusters_per_device",
    "cost_gap_ratio",
    "FIG3_ALGORITHMS",
    "run_experiment",
    "EXPERIMENTS",
]

log = logging.getLogger(__name__)

#: k-FED's server as Algorithm 2 prints it (step 2: one device z, "any z", its local centers
#: seed the traversal; step 7: one Lloyd round), which every experiment of the paper runs;
#: the estimator's defaults (32 starts, Lloyd to convergence) are measured better on small,
#: unbalanced devices (benchmarks/results/kfed_authors.md) but are not what the paper ran.
PRINTED = {"server_starts": 1, "server_lloyd_rounds": 1, **PRINTED_KFED}
#: The distributed Lloyd baseline of Fig 3 (not in the paper: its seeding and stopping are not
#: printed): exact k-means++ and Lloyd until no label changes (the estimator's defaults differ).
LLOYD_BASELINE = {"init": "k-means++", "tol": 0.0}


class Oracle:
    """The oracle clustering a federated experiment is measured against.

    Parameters
    ----------
    labels : ndarray of shape (n,)
    centers : ndarray of shape (k, d)
    cost : float
        ``phi*``, the k-means cost of ``centers`` on the data.
    """

    def __init__(self, labels, centers, cost):
        self.labels = np.asarray(labels)
        self.centers = np.asarray(centers)
        self.cost = float(cost)

    @property
    def n_clusters(self) -> int:
        return self.centers.shape[0]


def _structured(oracle: Oracle, k_prime: int, devices_per_group: int, seed: int) -> np.ndarray:
    return structured_partition(oracle.labels, k_prime, devices_per_group, random_state=seed)


def _costs(X, model, oracle: Oracle, prefix: str = "") -> dict:
    """Eq. (1) cost of the model's clustering (and over the oracle's), the nearest-center cost
    of its centers, and the accuracy of its clustering against the oracle labels."""
    cost = partition_cost(X, model.labels_)
    return {
        f"{prefix}cost": cost,
        f"{prefix}cost_over_oracle": cost / oracle.cost,
        f"{prefix}center_cost": kmeans_cost(X, model.cluster_centers_),
        f"{prefix}accuracy": clustering_accuracy(oracle.labels, model.labels_),
    }


def _subset(oracle: Oracle, n_devices: int, k_prime: int, seed: int):
    return subset_partition(oracle.labels, n_devices, k_prime, random_state=seed,
                            return_device_clusters=True)


def structured_vs_iid(X, oracle: Oracle, *, device_clusters_grid, n_devices: int, runs: int,
                      base_seed: int, dataset: str, show_progress: bool = True) -> pd.DataFrame:
    """Figure 2: k-FED on structured and IID partitions over the same ``Z`` devices.

    For each ``k'`` and run: one structured partition (every device a random subset of at most
    ``k'`` oracle clusters), one IID partition, k-FED with ``k`` and each device's ``k^(z)``
    (the IID partition: ``k'`` everywhere). Metrics: ``structured_cost``, ``iid_cost`` (Eq. 1),
    ``oracle_cost``, ``cost_gap_ratio = (phi - phi*) / (phi~ - phi*)``, the nearest-center
    costs and the accuracies against the oracle labels.
    """
    k = oracle.n_clusters
    records = []
    jobs = [(kp, j) for kp in device_clusters_grid for j in range(runs)]
    for k_prime, j in progress(jobs, desc=f"Fig 2 {dataset}", disable=not show_progress):
        seed = seed_for(base_seed, "kfed", "fig2", dataset, f"k={k}", f"k'={k_prime}",
                        f"Z={n_devices}", f"run={j}")
        structured, per_device = _subset(oracle, n_devices, k_prime,
                                         seed_for(seed, "structured partition"))
        iid = iid_partition(len(X), n_devices, random_state=seed_for(seed, "iid partition"))
        base = {"dataset": dataset, "n_clusters": k, "device_clusters": k_prime,
                "n_devices": n_devices, "run": j, "seed": seed}
        try:
            model_s = KFed(k, per_device, **PRINTED,
                           random_state=seed_for(seed, "k-FED structured"))
            model_i = KFed(k, k_prime, **PRINTED, random_state=seed_for(seed, "k-FED iid"))
            model_s.fit(X, devices=structured)
            model_i.fit(X, devices=iid)
        except InfeasibleSettingError as error:
            records.append(skipped_with_warning(
                base, error, f"Fig 2 {dataset} k'={k_prime} run {j}", log))
            continue
        metrics = {**_costs(X, model_s, oracle, "structured_"),
                   **_costs(X, model_i, oracle, "iid_")}
        records.append({**base, "oracle_cost": oracle.cost,
                        "cost_gap_ratio": cost_gap_ratio(metrics["structured_cost"],
                                                         metrics["iid_cost"], oracle.cost),
                        **metrics})
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "n_devices", "run",
                          "seed"])


def cost_gap_ratio(structured_cost: float, iid_cost: float, oracle_cost: float) -> float:
    """``(phi - phi*) / (phi~ - phi*)``; when the IID run reached the oracle's cost, the
    structured one is no closer: 1 if it reached it too, else ``inf``."""
    gap_s, gap_i = structured_cost - oracle_cost, iid_cost - oracle_cost
    if gap_i > 0:
        return gap_s / gap_i
    return 1.0 if gap_s <= 0 else np.inf


#: Figure 3's algorithms: name -> how to build it from (k, the devices' k^(z), max_iter, seed).
FIG3_ALGORITHMS = {
    "k-FED": lambda k, kz, max_iter, seed: KFed(k, kz, **PRINTED, random_state=seed),
    "k-FED (server to convergence)": lambda k, kz, max_iter, seed: KFed(
        k, kz, server_starts=1, server_lloyd_rounds="converge", **PRINTED_KFED,
        random_state=seed),
    "distributed Lloyd": lambda k, kz, max_iter, seed: DistributedLloyd(
        k, max_iter=max_iter, **LLOYD_BASELINE, random_state=seed),
}


def kfed_vs_distributed_lloyd(X, oracle: Oracle, *, device_clusters_grid, n_devices: int,
                              runs: int, base_seed: int, partition: str, dataset: str,
                              max_iter: int, show_progress: bool = True) -> pd.DataFrame:
    """Figure 3: k-FED (one round) against naive distributed k-means on the same partitions.

    The partitions are Figure 2's ("the same oracle clustering as the previous experiment"):
    ``Z`` devices holding random subsets of at most ``k'`` oracle clusters
    (``partition="structured"``) or IID. Naive distributed k-means is :class:`DistributedLloyd`
    with distributed k-means++ seeding, one round per Lloyd iteration, run to convergence.
    Rows carry an ``algorithm`` column (:data:`FIG3_ALGORITHMS`; k-FED with one server round
    as in Algorithm 2, and with the server run to convergence) with metrics ``cost`` (Eq. 1),
    ``cost_over_oracle``, ``center_cost``, ``accuracy``, ``rounds`` (and for the baseline
    ``lloyd_rounds`` and ``seeding_rounds``) and the rest of the communication
    (:data:`fedclust.communication.LEDGER_COLUMNS`).
    """
    if partition not in ("structured", "iid"):
        raise ValueError(f"partition must be 'structured' or 'iid'; got {partition!r}")
    k = oracle.n_clusters
    records = []
    jobs = [(kp, j) for kp in device_clusters_grid for j in range(runs)]
    for k_prime, j in progress(jobs, desc=f"Fig 3 {dataset} k={k}", disable=not show_progress):
        seed = seed_for(base_seed, "kfed", "fig3", dataset, partition, f"k={k}",
                        f"k'={k_prime}", f"Z={n_devices}", f"run={j}")
        if partition == "structured":
            devices, per_device = _subset(oracle, n_devices, k_prime, seed_for(seed, "partition"))
        else:
            devices = iid_partition(len(X), n_devices, random_state=seed_for(seed, "partition"))
            per_device = k_prime
        base = {"dataset": dataset, "partition": partition, "n_clusters": k,
                "device_clusters": k_prime, "n_devices": n_devices, "run": j, "seed": seed}
        for name, build in FIG3_ALGORITHMS.items():
            record = {**base, "algorithm": name}
            model = build(k, per_device, max_iter, seed_for(seed, name))
            try:
                model.fit(X, devices=devices)
            except InfeasibleSettingError as error:
                records.append(skipped_with_warning(
                    record, error, f"Fig 3 {dataset} {name} k'={k_prime}", log))
                continue
            comm = model.communication_
            extra = {key: comm[key] for key in ("lloyd_rounds", "seeding_rounds") if key in comm}
            records.append({**record, **_costs(X, model, oracle), **comm.ledger(), **extra})
    return tidy(records, ["dataset", "partition", "n_clusters", "device_clusters", "n_devices",
                          "run", "seed", "algorithm"])


def participation_sweep(X, oracle: Oracle, *, device_clusters: int, devices_per_group: int,
                        participations, runs: int, base_seed: int, dataset: str,
                        show_progress: bool = True) -> pd.DataFrame:
    """Beyond the paper (a): k-FED when a fraction of devices fails before sending.

    The failed devices' points are still clustered (through their local centers and the
    global centers, Theorem 3.2). Same partition for every participation level of a run.
    A level at which too few local centers reach the server is written as skipped.
    """
    k = oracle.n_clusters
    records = []
    for j in progress(range(runs), desc=f"participation {dataset}", disable=not show_progress):
        run = seed_for(base_seed, "kfed", "participation", dataset, f"k={k}",
                       f"k'={device_clusters}", f"run={j}")
        devices = _structured(oracle, device_clusters, devices_per_group,
                              seed_for(run, "partition"))
        for p in participations:
            seed = seed_for(run, f"p={float(p)}")
            base = {"dataset": dataset, "n_clusters": k, "device_clusters": device_clusters,
                    "participation": float(p), "run": j, "seed": seed}
            model = KFed(k, device_clusters, **PRINTED, participation=float(p),
                         random_state=seed)
            try:
                model.fit(X, devices=devices)
            except InfeasibleSettingError as error:
                records.append(skipped_with_warning(
                    base, error, f"participation {dataset} p={p} run {j}", log))
                continue
            comm = model.communication_
            records.append({**base, **_costs(X, model, oracle), **comm.ledger(),
                            # the one round's upload (the failed devices upload later, in
                            # the ledger's totals)
                            "floats_up_in_round": float(comm.total("local_centers")),
                            "devices_participating": comm["devices_participating"]})
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "participation", "run",
                          "seed"])


def new_devices_vs_refit(X, oracle: Oracle, *, device_clusters: int, devices_per_group: int,
                         held_out_fractions, runs: int, base_seed: int, dataset: str,
                         show_progress: bool = True) -> pd.DataFrame:
    """Beyond the paper (b): devices that join after the fit, clustered through ``predict``.

    A fraction of the devices is held out; k-FED is fitted on the others and the held-out
    devices are clustered by running Algorithm 1 locally and taking the nearest global center
    (Theorem 3.2, no new round). The alternative refits k-FED on all devices. Both are scored on
    the held-out devices' points: cost of the labels given (also over the oracle's cost on the
    same points) and accuracy against the oracle. A fraction that holds out no device, or
    every device, is written as skipped.
    """
    k = oracle.n_clusters
    records = []
    for j in progress(range(runs), desc=f"new devices {dataset}", disable=not show_progress):
        run = seed_for(base_seed, "kfed", "new_devices", dataset, f"k={k}",
                       f"k'={device_clusters}", f"run={j}")
        devices = _structured(oracle, device_clusters, devices_per_group,
                              seed_for(run, "partition"))
        ids = np.unique(devices)
        refit = None
        for h in held_out_fractions:
            seed = seed_for(run, f"held_out={float(h)}")
            base = {"dataset": dataset, "n_clusters": k, "device_clusters": device_clusters,
                    "held_out": float(h), "run": j, "seed": seed}
            n_out = int(round(float(h) * len(ids)))
            if n_out == 0 or n_out == len(ids):
                error = InfeasibleSettingError(
                    f"held_out={h} of {len(ids)} devices holds out {n_out}: nothing to compare")
                records.append(skipped_with_warning({**base, "method": "both"}, error,
                                                    f"new devices {dataset} h={h}", log))
                continue
            out = np.isin(devices, check_random_state(seed_for(seed, "held out devices"))
                          .choice(ids, size=n_out, replace=False))
            try:
                if refit is None:
                    refit = KFed(k, device_clusters, **PRINTED,
                                 random_state=seed_for(run, "k-FED refit")).fit(X, devices=devices)
                early = KFed(k, device_clusters, **PRINTED,
                             random_state=seed_for(seed, "k-FED early"))
                early.fit(X[~out], devices=devices[~out])
            except InfeasibleSettingError as error:
                records.append(skipped_with_warning({**base, "method": "both"}, error,
                                                    f"new devices {dataset} h={h} run {j}", log))
                continue
            late = early.predict(X[out], devices=devices[out])
            oracle_out = kmeans_cost(X[out], oracle.centers, oracle.labels[out])
            for name, centers, labels in (
                    ("predict (Theorem 3.2)", early.cluster_centers_, late),
                    ("refit with all devices", refit.cluster_centers_, refit.labels_[out])):
                cost = kmeans_cost(X[out], centers, labels)
                records.append({**base, "method": name, "held_out_cost": cost,
                                "held_out_cost_over_oracle": cost / oracle_out,
                                "held_out_accuracy": clustering_accuracy(oracle.labels[out],
                                                                         labels)})
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "held_out", "run", "seed",
                          "method"])


def clusters_per_device(devices, labels, min_share: float = 0.0) -> float:
    """Mean number of oracle clusters per device (holding more than ``min_share`` of its rows)."""
    table = pd.crosstab(devices, labels)
    shares = table.div(table.sum(axis=1), axis=0)
    return float((shares > min_share).sum(axis=1).mean())


def heterogeneity_sweep(X, natural_devices, oracle: Oracle, *, device_clusters: int,
                        mix_fractions, runs: int, base_seed: int, dataset: str,
                        show_progress: bool = True) -> pd.DataFrame:
    """Beyond the paper (c): from the natural (writer) partition towards IID.

    For each mixing fraction (:func:`mix_partition`) k-FED runs on the mixed partition; the
    heterogeneity is measured as the mean number of oracle clusters per device (all, and those
    holding more than 5% of a device's rows).
    """
    k = oracle.n_clusters
    records = []
    jobs = [(f, j) for f in mix_fractions for j in range(runs)]
    for frac, j in progress(jobs, desc=f"heterogeneity {dataset}", disable=not show_progress):
        seed = seed_for(base_seed, "kfed", "heterogeneity", dataset, f"k={k}",
                        f"k'={device_clusters}", f"mix={float(frac)}", f"run={j}")
        devices = mix_partition(natural_devices, float(frac), seed_for(seed, "mix"))
        base = {"dataset": dataset, "n_clusters": k, "device_clusters": device_clusters,
                "mix_fraction": float(frac), "run": j, "seed": seed}
        try:
            model = KFed(k, device_clusters, **PRINTED, random_state=seed_for(seed, "k-FED"))
            model.fit(X, devices=devices)
        except InfeasibleSettingError as error:
            records.append(skipped_with_warning(
                base, error, f"heterogeneity {dataset} mix={frac} run {j}", log))
            continue
        records.append({**base, **_costs(X, model, oracle),
                        "clusters_per_device": clusters_per_device(devices, oracle.labels),
                        "clusters_per_device_5pct": clusters_per_device(devices, oracle.labels,
                                                                        0.05),
                        "n_devices": len(np.unique(devices))})
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "mix_fraction", "run",
                          "seed"])


#: The experiments on real federated data, by their name in the config and results.
EXPERIMENTS = ("fig2", "fig3", "participation", "new_devices", "heterogeneity")


def run_experiment(experiment: str, data, oracle: Oracle, settings: dict, *, base_seed: int,
                   show_progress: bool = True) -> pd.DataFrame:
    """Run one experiment of :data:`EXPERIMENTS` on one prepared data set from its config
    section.

    ``data`` is a :class:`~fedclust.data.prepared.PreparedData`; ``settings`` the
    experiment's (schema-validated) config section. ``k'`` values above the oracle's ``k`` are
    left out of the grids of Figs 2 and 3 (logged). The table gets the data set's
    description (``data``) and title (``data_title``) as columns.
    """
    X, dataset = data.X, data.name
    k = oracle.n_clusters
    common = dict(runs=settings["runs"], base_seed=base_seed, dataset=dataset,
                  show_progress=show_progress)
    if experiment in ("fig2", "fig3"):
        grid = [kp for kp in settings["device_clusters"] if kp <= k]
        dropped = sorted(set(settings["device_clusters"]) - set(grid))
        if dropped:
            log.info("kfed.%s: k' in %s exceed the oracle k=%d and are left out", experiment,
                     dropped, k)
        if not grid:
            raise ValueError(f"kfed.{experiment}.device_clusters {settings['device_clusters']} "
                             f"has no k' <= k={k} for {dataset}")
        if experiment == "fig2":
            table = structured_vs_iid(X, oracle, device_clusters_grid=grid,
                                      n_devices=settings["n_devices"], **common)
        else:
            table = kfed_vs_distributed_lloyd(
                X, oracle, device_clusters_grid=grid, n_devices=settings["n_devices"],
                partition=settings["partition"], max_iter=settings["max_iter"], **common)
    elif experiment == "participation":
        table = participation_sweep(
            X, oracle, device_clusters=device_clusters_for(k, settings["device_clusters"]),
            devices_per_group=settings["devices_per_group"],
            participations=settings["fractions"], **common)
    elif experiment == "new_devices":
        table = new_devices_vs_refit(
            X, oracle, device_clusters=device_clusters_for(k, settings["device_clusters"]),
            devices_per_group=settings["devices_per_group"],
            held_out_fractions=settings["held_out"], **common)
    elif experiment == "heterogeneity":
        if not data.has_devices:
            raise ValueError(f"kfed.heterogeneity: {dataset} has no natural partition")
        table = heterogeneity_sweep(
            X, data.devices, oracle,
            device_clusters=device_clusters_for(k, settings["device_clusters"]),
            mix_fractions=settings["mix_fractions"], **common)
    else:
        raise ValueError(f"unknown k-FED experiment {experiment!r}; expected one of "
                         f"{EXPERIMENTS}")
    table.insert(1, "data", data.description)
    table.insert(2, "data_title", data.title)
    return table

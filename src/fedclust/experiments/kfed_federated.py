"""k-FED on real federated data (Dennis, Li & Smith, ICML 2021, Sec. 4.2.1 and beyond).

Every experiment starts from a data set ``X`` and its *oracle* clustering with ``k`` clusters
(k-means on all of ``X``, :func:`fedclust.experiments.separation.oracle_kmeans`), of cost
``phi*``. Partitions are built from the oracle labels:

* *structured*: groups of ``k'`` oracle clusters, each group dealt over ``m0`` devices
  (:func:`fedclust.federation.structured_partition`), ``Z = ceil(k / k') m0`` devices;
* *IID*: the same data dealt uniformly at random over the same ``Z`` devices.

Figure 2 compares k-FED's cost on both through ``(phi(k') - phi*) / (phi~(k') - phi*)``, with
``phi`` the k-means cost of k-FED's centers on the structured partition and ``phi~`` on the IID
one: below 1, heterogeneity helped. Figure 3 compares k-FED with naive distributed k-means
(:class:`~fedclust.algorithms.DistributedLloyd`) on the same partitions: cost and communication.
Beyond the paper: device failures before sending (participation), devices that join after the
fit (clustered through ``predict``, Theorem 3.2) against refitting with them, and a sweep from
the natural (writer) partition towards IID.

Costs are k-means costs of the returned centers (every point to its nearest center);
accuracies compare with the oracle labels up to permutation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .._validation import check_random_state
from ..algorithms import DistributedLloyd, KFed
from ..federation import iid_partition, structured_partition
from ..io import tidy
from ..metrics import clustering_accuracy, kmeans_cost
from ._seeds import run_seed

__all__ = [
    "Oracle",
    "structured_vs_iid",
    "kfed_vs_distributed_lloyd",
    "participation_sweep",
    "new_devices_vs_refit",
    "mix_partition",
    "heterogeneity_sweep",
]


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


def _kfed_metrics(X, model, oracle: Oracle, prefix: str = "") -> dict:
    cost = kmeans_cost(X, model.cluster_centers_)
    return {
        f"{prefix}cost": cost,
        f"{prefix}cost_over_oracle": cost / oracle.cost,
        f"{prefix}accuracy": clustering_accuracy(oracle.labels, model.predict(X)),
    }


def _communication(model, prefix: str) -> dict:
    comm = model.communication_
    return {f"{prefix}{key}": comm[key] for key in ("rounds", "floats_up", "floats_down")}


def structured_vs_iid(X, oracle: Oracle, *, device_clusters_grid, devices_per_group: int,
                      runs: int, base_seed: int, dataset: str = "",
                      progress: bool = True) -> pd.DataFrame:
    """Figure 2: k-FED on structured and IID partitions with the same number of devices.

    For each ``k'`` and run: one structured partition (``k'`` oracle clusters per group, ``m0``
    devices per group), one IID partition over the same ``Z`` devices, k-FED with
    ``(k, k')`` on each. Metrics: ``structured_cost``, ``iid_cost`` (k-means costs of the
    centers), ``oracle_cost``, ``cost_gap_ratio`` ``= (phi - phi*) / (phi~ - phi*)`` and the
    accuracies against the oracle labels.
    """
    k = oracle.n_clusters
    records = []
    jobs = [(i, kp, j) for i, kp in enumerate(device_clusters_grid) for j in range(runs)]
    for i, k_prime, j in tqdm(jobs, desc=f"Fig 2 {dataset}", disable=not progress):
        seed = run_seed(base_seed, k, i, j)
        rng = np.random.default_rng(seed)
        structured = structured_partition(oracle.labels, k_prime, devices_per_group,
                                          random_state=rng)
        n_devices = len(np.unique(structured))
        iid = iid_partition(len(X), n_devices, random_state=rng)
        model_s = KFed(k, k_prime, random_state=rng).fit(X, structured)
        model_i = KFed(k, k_prime, random_state=rng).fit(X, iid)
        metrics = {**_kfed_metrics(X, model_s, oracle, "structured_"),
                   **_kfed_metrics(X, model_i, oracle, "iid_")}
        gap_s = metrics["structured_cost"] - oracle.cost
        gap_i = metrics["iid_cost"] - oracle.cost
        records.append({
            "dataset": dataset, "n_clusters": k, "device_clusters": k_prime,
            "devices_per_group": devices_per_group, "n_devices": n_devices, "run": j,
            "seed": seed, "oracle_cost": oracle.cost,
            "cost_gap_ratio": gap_s / gap_i if gap_i > 0 else np.nan,
            **metrics,
        })
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "devices_per_group",
                          "n_devices", "run", "seed"])


def kfed_vs_distributed_lloyd(X, oracle: Oracle, *, device_clusters_grid,
                              devices_per_group: int, runs: int, base_seed: int,
                              partition: str = "structured", dataset: str = "",
                              max_iter: int = 300, progress: bool = True) -> pd.DataFrame:
    """Figure 3: k-FED (one round) against naive distributed k-means on the same partitions.

    Naive distributed k-means is :class:`DistributedLloyd` with distributed k-means++ seeding,
    one round per Lloyd iteration, run to convergence. Rows carry an ``algorithm`` column
    (``k-FED`` or ``distributed Lloyd``) with metrics ``cost``, ``cost_over_oracle``,
    ``accuracy``, ``rounds``, ``floats_up`` and ``floats_down``.
    """
    k = oracle.n_clusters
    records = []
    jobs = [(i, kp, j) for i, kp in enumerate(device_clusters_grid) for j in range(runs)]
    for i, k_prime, j in tqdm(jobs, desc=f"Fig 3 {dataset} k={k}", disable=not progress):
        seed = run_seed(base_seed, k, i, j)
        rng = np.random.default_rng(seed)
        if partition == "structured":
            devices = structured_partition(oracle.labels, k_prime, devices_per_group,
                                           random_state=rng)
        else:
            n_devices = -(-k // k_prime) * devices_per_group
            devices = iid_partition(len(X), n_devices, random_state=rng)
        base = {"dataset": dataset, "partition": partition, "n_clusters": k,
                "device_clusters": k_prime, "devices_per_group": devices_per_group,
                "n_devices": len(np.unique(devices)), "run": j, "seed": seed}
        for name, model in (("k-FED", KFed(k, k_prime, random_state=rng)),
                            ("distributed Lloyd", DistributedLloyd(k, max_iter=max_iter,
                                                                    random_state=rng))):
            model.fit(X, devices)
            records.append({**base, "algorithm": name, **_kfed_metrics(X, model, oracle),
                            **_communication(model, "")})
    return tidy(records, ["dataset", "partition", "n_clusters", "device_clusters",
                          "devices_per_group", "n_devices", "run", "seed", "algorithm"])


def _structured_runs(oracle: Oracle, device_clusters: int, devices_per_group: int, runs: int,
                     base_seed: int, desc: str, progress: bool):
    """Yield ``(j, seed, rng, devices)`` per run: the run's seed, its generator and a structured
    partition drawn from it. Run ``j`` gets the same partition in every experiment using this."""
    for j in tqdm(range(runs), desc=desc, disable=not progress):
        seed = run_seed(base_seed, oracle.n_clusters, j)
        rng = np.random.default_rng(seed)
        devices = structured_partition(oracle.labels, device_clusters, devices_per_group,
                                       random_state=rng)
        yield j, seed, rng, devices


def participation_sweep(X, oracle: Oracle, *, device_clusters: int, devices_per_group: int,
                        participations, runs: int, base_seed: int, dataset: str = "",
                        progress: bool = True) -> pd.DataFrame:
    """Beyond the paper (a): k-FED when a fraction of devices fails before sending.

    The failed devices' points are still clustered (through their local centers and the
    global centers, Theorem 3.2). Same partition for every participation level of a run.
    """
    k = oracle.n_clusters
    records = []
    for j, seed, rng, devices in _structured_runs(oracle, device_clusters, devices_per_group,
                                                  runs, base_seed, f"participation {dataset}",
                                                  progress):
        for p in participations:
            base = {"dataset": dataset, "n_clusters": k, "device_clusters": device_clusters,
                    "participation": float(p), "run": j, "seed": seed}
            model = KFed(k, device_clusters, participation=float(p), random_state=rng)
            try:
                model.fit(X, devices)
            except ValueError:
                # too few devices left to send k local centers: k-FED cannot run
                records.append({**base, "cost": np.nan, "cost_over_oracle": np.nan,
                                "accuracy": np.nan, "floats_up": np.nan,
                                "devices_participating": np.nan})
                continue
            records.append({**base, **_kfed_metrics(X, model, oracle),
                            "floats_up": model.communication_["floats_up"],
                            "devices_participating":
                                model.communication_["devices_participating"]})
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "participation", "run",
                          "seed"])


def new_devices_vs_refit(X, oracle: Oracle, *, device_clusters: int, devices_per_group: int,
                         held_out_fractions, runs: int, base_seed: int, dataset: str = "",
                         progress: bool = True) -> pd.DataFrame:
    """Beyond the paper (b): devices that join after the fit, clustered through ``predict``.

    A fraction of the devices is held out; k-FED is fitted on the others and the held-out
    devices are clustered by running Algorithm 1 locally and taking the nearest global center
    (Theorem 3.2, no new round). The alternative refits k-FED on all devices. Both are scored on
    the held-out devices' points: cost of the labels given (also over the oracle's cost on the
    same points) and accuracy against the oracle.
    """
    k = oracle.n_clusters
    records = []
    for j, seed, rng, devices in _structured_runs(oracle, device_clusters, devices_per_group,
                                                  runs, base_seed, f"new devices {dataset}",
                                                  progress):
        ids = np.unique(devices)
        refit = KFed(k, device_clusters, random_state=rng).fit(X, devices)
        for h in held_out_fractions:
            n_out = int(round(float(h) * len(ids)))
            if n_out == 0 or n_out == len(ids):
                continue
            out_ids = rng.choice(ids, size=n_out, replace=False)
            out = np.isin(devices, out_ids)
            base = {"dataset": dataset, "n_clusters": k, "device_clusters": device_clusters,
                    "held_out": float(h), "run": j, "seed": seed}
            try:
                early = KFed(k, device_clusters, random_state=rng).fit(X[~out], devices[~out])
            except ValueError:
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


def mix_partition(devices, fraction: float, random_state=None) -> np.ndarray:
    """Move a ``fraction`` of the rows to devices drawn uniformly at random.

    ``fraction=0`` keeps the natural partition, ``fraction=1`` deals every row at random: the
    device sizes stay those of the natural partition in expectation, the heterogeneity goes.
    """
    rng = check_random_state(random_state)
    devices = np.asarray(devices).copy()
    ids = np.unique(devices)
    moved = rng.random(len(devices)) < fraction
    devices[moved] = rng.choice(ids, size=int(moved.sum()))
    return devices


def clusters_per_device(devices, labels, min_share: float = 0.0) -> float:
    """Mean number of oracle clusters per device (holding more than ``min_share`` of its rows)."""
    table = pd.crosstab(devices, labels)
    shares = table.div(table.sum(axis=1), axis=0)
    return float((shares > min_share).sum(axis=1).mean())


def heterogeneity_sweep(X, natural_devices, oracle: Oracle, *, device_clusters: int,
                        mix_fractions, runs: int, base_seed: int, dataset: str = "",
                        progress: bool = True) -> pd.DataFrame:
    """Beyond the paper (c): from the natural (writer) partition towards IID.

    For each mixing fraction (:func:`mix_partition`) k-FED runs on the mixed partition; the
    heterogeneity is measured as the mean number of oracle clusters per device (all, and those
    holding more than 5% of a device's rows).
    """
    k = oracle.n_clusters
    records = []
    jobs = [(i, f, j) for i, f in enumerate(mix_fractions) for j in range(runs)]
    for i, frac, j in tqdm(jobs, desc=f"heterogeneity {dataset}", disable=not progress):
        seed = run_seed(base_seed, k, i, j)
        rng = np.random.default_rng(seed)
        devices = mix_partition(natural_devices, float(frac), rng)
        model = KFed(k, device_clusters, random_state=rng).fit(X, devices)
        records.append({"dataset": dataset, "n_clusters": k, "device_clusters": device_clusters,
                        "mix_fraction": float(frac), "run": j, "seed": seed,
                        **_kfed_metrics(X, model, oracle),
                        "clusters_per_device": clusters_per_device(devices, oracle.labels),
                        "clusters_per_device_5pct": clusters_per_device(devices, oracle.labels,
                                                                        0.05),
                        "n_devices": len(np.unique(devices))})
    return tidy(records, ["dataset", "n_clusters", "device_clusters", "mix_fraction", "run",
                          "seed"])

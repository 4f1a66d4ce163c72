"""Separation of real data under an oracle clustering (k-FED, Appendix B.2 and Figure 5).

The oracle clustering of a data set is k-means on all of it (k-means++ seeding, Lloyd to
convergence, best of ``n_init``). For every ``k`` of a grid, the pairwise separations ``c_rs``
(:func:`fedclust.metrics.separation`) of the oracle clusters tell how far the data are from
k-FED's separation assumption; the ``k`` with the largest share of pairs above ``c0`` is the
one later experiments use.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.cluster import kmeans_plusplus

from ..data.cache import read_h5, write_h5
from ..lloyd import lloyd
from ..metrics import separation
from ._seeds import run_seed

__all__ = ["oracle_kmeans", "write_oracle", "read_oracle", "pairs_table", "separation_pairs",
           "separation_summary", "choose_k"]


def oracle_kmeans(X: np.ndarray, n_clusters: int, *, seed: int, n_init: int = 1,
                  max_iter: int = 300):
    """Centralized k-means on all of ``X``: best (lowest cost) of ``n_init`` k-means++ starts.

    Returns
    -------
    LloydResult
    """
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(n_init):
        init, _ = kmeans_plusplus(X, n_clusters, random_state=int(rng.integers(2**31 - 1)))
        result = lloyd(X, init, max_iter=max_iter)
        if best is None or result.inertia < best.inertia:
            best = result
    return best


def write_oracle(result, path) -> None:
    """Store an oracle clustering (labels, centers, cost) as HDF5."""
    write_h5(path, {"labels": result.labels.astype(np.int64), "centers": result.centers},
             {"cost": float(result.inertia), "n_iter": int(result.n_iter),
              "converged": bool(result.converged)})


def read_oracle(path):
    """Read an oracle clustering written by :func:`write_oracle`.

    Returns
    -------
    labels : ndarray of shape (n,)
    centers : ndarray of shape (k, d)
    attrs : dict with ``cost``, ``n_iter`` and ``converged``
    """
    arrays, attrs = read_h5(path, ["labels", "centers"])
    if "cost" not in attrs:
        raise ValueError(f"{path}: not an oracle clustering (attribute 'cost' missing)")
    return arrays["labels"], arrays["centers"], attrs


def pairs_table(X: np.ndarray, labels: np.ndarray, *, device_clusters: int,
                devices_per_cluster: int, oracle_cost: float = np.nan,
                oracle_iterations: int = -1, dataset: str = "") -> pd.DataFrame:
    """``c_rs`` of every pair of clusters of ``labels``, one row per pair (metric ``c_rs``)."""
    # an oracle cluster can end empty; separation is defined on the non-empty ones
    _, labels = np.unique(labels, return_inverse=True)
    sep = separation(X, labels, device_clusters=device_clusters,
                     devices_per_cluster=devices_per_cluster)
    r, s, c = sep.pairs()
    return pd.DataFrame({
        "dataset": dataset,
        "n_samples": X.shape[0],
        "n_clusters": int(labels.max()) + 1,
        "device_clusters": device_clusters,
        "devices_per_cluster": devices_per_cluster,
        "oracle_cost": oracle_cost,
        "oracle_iterations": oracle_iterations,
        "r": r,
        "s": s,
        "metric": "c_rs",
        "value": c,
    })


def separation_pairs(X: np.ndarray, n_clusters: int, *, device_clusters: int,
                     devices_per_cluster: int, base_seed: int, n_init: int = 1,
                     max_iter: int = 300, dataset: str = "") -> pd.DataFrame:
    """Oracle clustering with ``n_clusters`` clusters, then :func:`pairs_table` of it."""
    oracle = oracle_kmeans(X, n_clusters, seed=run_seed(base_seed, n_clusters), n_init=n_init,
                           max_iter=max_iter)
    return pairs_table(X, oracle.labels, device_clusters=device_clusters,
                       devices_per_cluster=devices_per_cluster, oracle_cost=oracle.inertia,
                       oracle_iterations=oracle.n_iter, dataset=dataset)


def separation_summary(pairs: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per ``k``: number of pairs, share with ``c_rs > threshold``, and quantiles of ``c_rs``."""
    rows = []
    for k, group in pairs.groupby("n_clusters", sort=True):
        c = group["value"].to_numpy()
        rows.append({
            "dataset": group["dataset"].iloc[0],
            "n_samples": int(group["n_samples"].iloc[0]),
            "n_clusters": int(k),
            "device_clusters": int(group["device_clusters"].iloc[0]),
            "devices_per_cluster": int(group["devices_per_cluster"].iloc[0]),
            "threshold": threshold,
            "n_pairs": len(c),
            "share_above": float(np.mean(c > threshold)),
            "c_rs_median": float(np.median(c)),
            "c_rs_q10": float(np.quantile(c, 0.1)),
            "c_rs_q90": float(np.quantile(c, 0.9)),
            "oracle_cost": float(group["oracle_cost"].iloc[0]),
        })
    return pd.DataFrame(rows)


def choose_k(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` with a column ``chosen`` marking the row with the largest ``share_above``.

    Ties go to the larger ``k``: among clusterings that are equally well separated, the finer
    one keeps more structure for the federated experiments built on it.
    """
    order = summary.sort_values(["share_above", "n_clusters"], ascending=[False, False])
    out = summary.copy()
    out["chosen"] = out.index == order.index[0]
    return out

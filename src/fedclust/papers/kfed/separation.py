"""Separation of real data under an oracle clustering (k-FED, Appendix B.2 and Figure 5).

The oracle clustering of a data set is the centralized reference, k-means on all of it
(:func:`fedclust.centralized.reference_kmeans`: greedy k-means++ seeding, Lloyd to
convergence, best of ``n_init``). For every ``k`` of a grid, the pairwise separations ``c_rs``
(:func:`fedclust.metrics.separation`) of the oracle clusters tell how far the data are from
k-FED's separation assumption; the ``k`` with the largest share of pairs above ``c0`` is the
one later experiments use.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...centralized import reference_kmeans
from ...data.cache import read_h5, write_h5
from ...io import read_table
from ...metrics import separation
from ...seeds import seed_for

__all__ = ["oracle_seed", "write_oracle", "read_oracle", "select_oracle",
           "pairs_table", "separation_pairs", "separation_summary", "choose_k",
           "summarize_separation"]


def oracle_seed(base_seed: int, dataset: str, n_clusters: int) -> int:
    """The seed of a data set's oracle clustering with ``n_clusters`` clusters."""
    return seed_for(base_seed, "oracle", dataset, f"k={n_clusters}")


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


def select_oracle(paths, *, n_clusters, chosen=None):
    """The oracle clustering an experiment uses, among the files ``paths`` (``.../k<k>.h5``).

    ``n_clusters`` is an int, or ``"chosen"``: then the k of the one-row table ``chosen``
    (``chosen_k.csv`` of the separation analysis).

    Returns
    -------
    labels, centers, attrs
        As :func:`read_oracle`.
    """
    if n_clusters == "chosen":
        if chosen is None:
            raise ValueError("n_clusters='chosen' needs the chosen_k table")
        k = int(read_table(chosen)["n_clusters"].iloc[0])
    else:
        k = int(n_clusters)
    by_k = {Path(p).stem: p for p in ([paths] if isinstance(paths, (str, Path)) else paths)}
    if f"k{k}" not in by_k:
        raise ValueError(f"no oracle clustering with k={k} among {sorted(by_k.values())}")
    return read_oracle(by_k[f"k{k}"])


def pairs_table(X: np.ndarray, labels: np.ndarray, *, device_clusters: int,
                devices_per_cluster: int, oracle_cost: float = np.nan,
                oracle_iterations: int = -1, dataset: str = "",
                data_title: str = "") -> pd.DataFrame:
    """``c_rs`` of every pair of clusters of ``labels``, one row per pair (metric ``c_rs``)."""
    # an oracle cluster can end empty; separation is defined on the non-empty ones
    _, labels = np.unique(labels, return_inverse=True)
    sep = separation(X, labels, device_clusters=device_clusters,
                     devices_per_cluster=devices_per_cluster)
    r, s, c = sep.pairs()
    return pd.DataFrame({
        "dataset": dataset,
        "data_title": data_title or dataset,
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
    oracle = reference_kmeans(X, n_clusters, seed=oracle_seed(base_seed, dataset, n_clusters),
                              n_init=n_init, max_iter=max_iter)
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
            "data_title": group["data_title"].iloc[0] if "data_title" in group
            else group["dataset"].iloc[0],
            "n_samples": int(group["n_samples"].iloc[0]),
            "n_clusters": int(k),
            "device_clusters": int(group["device_clusters"].iloc[0]),
            "devices_per_cluster": int(group["devices_per_cluster"].iloc[0]),
            "threshold": threshold,
            "n_pairs": len(c),
            "share_above": float(np.mean(c > threshold)),
            "share_below_one": float(np.mean(c < 1.0)),
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


def summarize_separation(pairs: pd.DataFrame, threshold: float):
    """The per-k summary of all pairs, with the chosen k marked, and the chosen row alone.

    Returns
    -------
    summary : DataFrame
        :func:`separation_summary` with the ``chosen`` column of :func:`choose_k`.
    chosen : DataFrame
        The chosen row (without the ``chosen`` column): what later experiments read.
    """
    summary = choose_k(separation_summary(pairs, threshold))
    return summary, summary[summary["chosen"]].drop(columns="chosen").reset_index(drop=True)

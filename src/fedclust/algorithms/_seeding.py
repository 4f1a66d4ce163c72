"""Seeding over a federation, with the communication it costs.

:func:`distributed_kmeans_plusplus` is k-means++ (Arthur & Vassilvitskii, 2007) run without
moving data: the server keeps the chosen centers, every device keeps the squared distance
``D^2`` of its points to them. For each new center the server gathers each device's ``D^2``
mass, picks a device with probability proportional to its mass, and that device samples one of
its points with probability proportional to ``D^2``. A point ``x`` on device ``z`` is therefore
chosen with probability ``(m_z / sum m) (D^2(x) / m_z) = D^2(x) / sum D^2``: exactly the
distribution of centralized k-means++ (without sklearn's greedy local trials). This is the
LocalKMeans++ initialization of the LocalKMeans paper and the seeding of the distributed Lloyd
baseline.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice
from ..federation import Federation
from ..lloyd import squared_norms
from ._base import Communication

__all__ = ["distributed_kmeans_plusplus", "distributed_random_init", "initial_centers"]


def _sample_point(federation: Federation, masses: np.ndarray, weights: np.ndarray | None,
                  rng: np.random.Generator) -> int:
    """Server picks a device proportionally to ``masses``; the device picks one of its rows
    proportionally to ``weights`` (uniformly when None). Returns the sorted-row index."""
    device = rng.choice(len(masses), p=masses / masses.sum())
    start, stop = federation.offsets[device], federation.offsets[device + 1]
    if weights is None:
        return int(start + rng.integers(stop - start))
    w = weights[start:stop]
    return int(start + rng.choice(stop - start, p=w / w.sum()))


def distributed_random_init(federation: Federation, n_clusters: int,
                            rng: np.random.Generator):
    """``n_clusters`` distinct rows chosen uniformly at random from the whole federation.

    Protocol: the devices report their sizes (one round), then the server draws the centers and
    asks the owning devices for them (a second round, one point per center).

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    rows : ndarray of shape (n_clusters,)
        Indices of the chosen rows in the federation's sorted order.
    communication : Communication
    """
    n, d, Z = federation.n_samples, federation.n_features, federation.n_devices
    if n_clusters > n:
        raise ValueError(f"n_clusters={n_clusters} exceeds the {n} samples of the federation")
    rows = rng.choice(n, size=n_clusters, replace=False)
    owners = np.unique(np.searchsorted(federation.offsets, rows, side="right") - 1)
    comm = Communication()
    comm.add_round(up_floats=Z, down_floats=0, up_messages=Z, down_messages=Z)
    comm.add_round(up_floats=n_clusters * d, down_floats=0, up_messages=len(owners),
                   down_messages=len(owners))
    return federation.X[rows].copy(), rows, comm


def distributed_kmeans_plusplus(federation: Federation, n_clusters: int,
                                rng: np.random.Generator, *, x_sq: np.ndarray | None = None):
    """Exact k-means++ over a federation (see the module docstring).

    Communication, per center: one round in which the server broadcasts the previous center
    (``d`` floats to each device; nothing for the first) and gathers one ``D^2`` mass per device
    (the device sizes for the first center), then one round with the chosen device, which sends
    its sampled point (``d`` floats).

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    rows : ndarray of shape (n_clusters,)
        Indices of the chosen rows in the federation's sorted order.
    communication : Communication
    """
    X = federation.X
    n, d, Z = federation.n_samples, federation.n_features, federation.n_devices
    if n_clusters > n:
        raise ValueError(f"n_clusters={n_clusters} exceeds the {n} samples of the federation")
    if x_sq is None:
        x_sq = squared_norms(X)
    comm = Communication()
    starts = federation.offsets[:-1]
    rows = np.empty(n_clusters, dtype=np.int64)
    # first center: uniform over all points (device chosen by size, then a uniform row)
    masses = federation.device_sizes.astype(np.float64)
    comm.add_round(up_floats=Z, down_floats=0, up_messages=Z, down_messages=Z)
    rows[0] = _sample_point(federation, masses, None, rng)
    comm.add_round(up_floats=d, down_floats=0, up_messages=1, down_messages=1)
    d2 = np.maximum(x_sq - 2.0 * X @ X[rows[0]] + x_sq[rows[0]], 0.0)
    for j in range(1, n_clusters):
        masses = np.add.reduceat(d2, starts)
        comm.add_round(up_floats=Z, down_floats=Z * d, up_messages=Z, down_messages=Z)
        if masses.sum() <= 0.0:
            # every point coincides with a chosen center: fall back to uniform, as k-means++ does
            rows[j] = _sample_point(federation, federation.device_sizes.astype(np.float64),
                                    None, rng)
        else:
            rows[j] = _sample_point(federation, masses, d2, rng)
        comm.add_round(up_floats=d, down_floats=0, up_messages=1, down_messages=1)
        d2 = np.minimum(d2, np.maximum(x_sq - 2.0 * X @ X[rows[j]] + x_sq[rows[j]], 0.0))
    return X[rows].copy(), rows, comm


def initial_centers(init, federation: Federation, n_clusters: int, rng: np.random.Generator):
    """The ``init`` parameter of the distributed estimators, resolved.

    ``"k-means++"`` runs :func:`distributed_kmeans_plusplus`, ``"random"``
    :func:`distributed_random_init`; an array of shape ``(n_clusters, n_features)`` is used as
    given, at no communication cost.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    communication : Communication
    """
    if isinstance(init, str):
        check_choice(init, "init", {"k-means++", "random"})
        seeding = distributed_kmeans_plusplus if init == "k-means++" else distributed_random_init
        centers, _, comm = seeding(federation, n_clusters, rng)
        return centers, comm
    centers = np.asarray(init, dtype=federation.X.dtype)
    shape = (n_clusters, federation.n_features)
    if centers.shape != shape:
        raise ValueError(f"init array must have shape {shape}; got {centers.shape}")
    return centers.copy(), Communication()

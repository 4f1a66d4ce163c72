"""The one Lloyd / assignment kernel that every algorithm shares.

Distances use the GEMM form ``||x||^2 - 2 x.c + ||c||^2`` and are computed in row chunks, so
memory stays bounded whatever ``n``. Centroid updates, for all devices and clusters at once, are
segment sums done as one sparse matrix product. Per-device variants work on a
:class:`~fedclust.federation.Federation`, whose rows are sorted by device: each device's
assignment is one BLAS GEMM on a contiguous view. No Python loop ever runs over points.

Conventions
-----------
* A cluster that loses all its points keeps its previous center (it is *not* reseeded): the
  algorithms built on this kernel decide themselves what an empty cluster means.
* Weights (``weights=``) make each center the weighted mean of its rows and the cost
  ``sum_i w_i ||x_i - c(x_i)||^2``; ``w`` repeated rows and weight ``w`` give the same centers.
  Assignment is unweighted: a row goes to its nearest center whatever its weight.
* Negative weights (the centre weights of a distributed coreset, Balcan et al. 2013, Alg. 1,
  can be negative) are accepted as they are: the cost keeps their negative terms (that is what
  makes the coreset cost unbiased), and a center moves to the weighted mean of its rows when
  their total weight is positive. A cluster whose total weight is zero or negative has no
  minimizing mean (the weighted cost is then not bounded below) and keeps its previous center,
  like an empty cluster. Seeding (:mod:`fedclust.seeding`) never draws a row of weight <= 0.
* Lloyd stops at a fixed point (an assignment step that changes no label) or after
  ``max_iter`` update steps; ``n_iter`` counts update steps.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from .federation import Federation

__all__ = [
    "squared_norms",
    "per_device_blas",
    "assign",
    "assign_by_device",
    "segment_sums",
    "update_centers",
    "lloyd",
    "lloyd_by_device",
    "LloydResult",
    "DeviceLloydResult",
]

# about 32 MB of float64 per temporary distance block
_CHUNK_ELEMENTS = 2**22
# below this mean number of rows per device, per-device BLAS calls run single-threaded
_SMALL_DEVICE_ROWS = 4096


def per_device_blas(federation: Federation):
    """Context in which per-device linear algebra runs with one BLAS thread when devices are small.

    A device's matrices are small: multithreaded BLAS only adds synchronisation (measured 5-10x
    slower for a 500 x 784 device on 2 cores), and devices are independent anyway.
    """
    if federation.n_samples < _SMALL_DEVICE_ROWS * federation.n_devices:
        return threadpool_limits(limits=1, user_api="blas")
    return contextlib.nullcontext()


def squared_norms(X: np.ndarray) -> np.ndarray:
    """Squared Euclidean norm of every row."""
    return np.einsum("ij,ij->i", X, X)


def _nearest(dots: np.ndarray, x_sq: np.ndarray, c_sq: np.ndarray):
    """Labels and squared distances from the ``x.c`` products (last axis runs over centers)."""
    d2 = c_sq - 2.0 * dots
    labels = np.argmin(d2, axis=-1)
    best = np.take_along_axis(d2, labels[..., None], axis=-1)[..., 0] + x_sq
    # cancellation in the GEMM form can give tiny negatives
    return labels, np.maximum(best, 0.0)


def _center_sq_norms(centers: np.ndarray, center_mask: np.ndarray | None) -> np.ndarray:
    c_sq = np.einsum("...kd,...kd->...k", centers, centers)
    if center_mask is not None:
        c_sq = np.where(center_mask, c_sq, np.inf)
    return c_sq


def assign(X: np.ndarray, centers: np.ndarray, *, x_sq: np.ndarray | None = None,
           center_mask: np.ndarray | None = None):
    """Nearest center of every row.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    centers : ndarray of shape (k, d)
    x_sq : ndarray of shape (n,), optional
        Precomputed :func:`squared_norms` of ``X``.
    center_mask : ndarray of shape (k,) of bool, optional
        Centers marked False are never chosen.

    Returns
    -------
    labels : ndarray of shape (n,) of int64
    sq_distances : ndarray of shape (n,)
    """
    X = np.asarray(X)
    centers = np.asarray(centers, dtype=X.dtype)
    if x_sq is None:
        x_sq = squared_norms(X)
    c_sq = _center_sq_norms(centers, center_mask)
    n, k = X.shape[0], centers.shape[0]
    labels = np.empty(n, dtype=np.int64)
    sq = np.empty(n, dtype=X.dtype)
    step = max(1, _CHUNK_ELEMENTS // max(k, 1))
    for start in range(0, n, step):
        stop = min(start + step, n)
        labels[start:stop], sq[start:stop] = _nearest(X[start:stop] @ centers.T,
                                                      x_sq[start:stop], c_sq)
    return labels, sq


def assign_by_device(federation: Federation, centers: np.ndarray, *,
                     center_mask: np.ndarray | None = None, x_sq: np.ndarray | None = None):
    """Nearest center of every row among the centers of the row's own device.

    Each device's rows are a contiguous slice of the federation, so every device costs one
    chunked GEMM on a view of its rows. (Batching padded blocks of devices through one
    ``np.matmul`` was measured no faster and needs a padded copy of ``X``; see
    ``benchmarks/bench_kernel.py``.)

    Parameters
    ----------
    federation : Federation
    centers : ndarray of shape (n_devices, k, d)
        ``centers[z]`` are the centers of the device at position ``z``.
    center_mask : ndarray of shape (n_devices, k) of bool, optional
        False marks a padding center (a device with fewer than ``k`` centers).
    x_sq : ndarray of shape (n_samples,), optional

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Index in ``[0, k)`` of the nearest center of the row's device, sorted-row order.
    sq_distances : ndarray of shape (n_samples,)
    """
    X = federation.X
    centers = np.asarray(centers, dtype=X.dtype)
    if x_sq is None:
        x_sq = squared_norms(X)
    labels = np.empty(federation.n_samples, dtype=np.int64)
    sq = np.empty(federation.n_samples, dtype=X.dtype)
    offsets = federation.offsets
    with per_device_blas(federation):
        for z in range(federation.n_devices):
            rows = slice(offsets[z], offsets[z + 1])
            mask = None if center_mask is None else center_mask[z]
            labels[rows], sq[rows] = assign(X[rows], centers[z], x_sq=x_sq[rows],
                                            center_mask=mask)
    return labels, sq


def segment_sums(X: np.ndarray, segments: np.ndarray, n_segments: int,
                 weights: np.ndarray | None = None):
    """Weighted sum and total weight of the rows in each segment.

    Returns
    -------
    sums : ndarray of shape (n_segments, d)
    totals : ndarray of shape (n_segments,)
    """
    n = X.shape[0]
    w = np.ones(n, dtype=X.dtype) if weights is None else np.asarray(weights, dtype=X.dtype)
    indicator = sp.csr_matrix((w, (segments, np.arange(n))), shape=(n_segments, n))
    sums = np.asarray(indicator @ X)
    totals = np.bincount(segments, weights=w, minlength=n_segments).astype(X.dtype)
    return sums, totals


def update_centers(X: np.ndarray, labels: np.ndarray, previous: np.ndarray,
                   weights: np.ndarray | None = None):
    """Lloyd's update step: every center moves to the (weighted) mean of its points.

    Rows of ``previous`` whose cluster is empty, or of total weight <= 0, are kept. Works for
    flat centers ``(k, d)`` and, with ``labels`` running over ``n_devices * k`` segments, for
    per-device centers ``(Z, k, d)``.

    Returns
    -------
    centers : ndarray, same shape as ``previous``
    totals : ndarray of the leading shape of ``previous``
        Number (or weight) of points in every cluster.
    """
    flat = previous.reshape(-1, previous.shape[-1])
    sums, totals = segment_sums(X, labels, flat.shape[0], weights)
    nonempty = totals > 0
    centers = flat.copy()
    centers[nonempty] = sums[nonempty] / totals[nonempty, None]
    return centers.reshape(previous.shape), totals.reshape(previous.shape[:-1])


@dataclass
class LloydResult:
    """Output of :func:`lloyd`."""

    centers: np.ndarray
    labels: np.ndarray
    sq_distances: np.ndarray
    cluster_weights: np.ndarray
    n_iter: int
    converged: bool
    weights: np.ndarray | None = None

    @property
    def inertia(self) -> float:
        """The (weighted) k-means cost of the rows under ``centers``."""
        if self.weights is None:
            return float(self.sq_distances.sum())
        return float(self.sq_distances @ self.weights)


def lloyd(X: np.ndarray, init: np.ndarray, *, weights: np.ndarray | None = None,
          max_iter: int = 300, on_iteration=None) -> LloydResult:
    """Lloyd's algorithm from ``init``: alternate update and assignment steps.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    init : ndarray of shape (k, d)
    weights : ndarray of shape (n,), optional
        Row weights: each center becomes the weighted mean of its rows (see the module
        docstring for negative weights).
    max_iter : int
        Number of update steps at most; ``max_iter=1`` is exactly one Lloyd round (assign to
        ``init``, move every center to its mean) followed by the assignment to the new centers.
    on_iteration : callable(iteration, centers, labels, sq_distances), optional
        Called after the first assignment (iteration 0) and after every update and
        assignment.

    Returns
    -------
    LloydResult
        ``labels`` and ``sq_distances`` refer to the returned centers; ``sq_distances`` are
        unweighted, ``inertia`` and ``cluster_weights`` weighted.
    """
    X = np.asarray(X)
    centers = np.array(init, dtype=X.dtype, copy=True)
    x_sq = squared_norms(X)
    labels, sq = assign(X, centers, x_sq=x_sq)
    if on_iteration is not None:
        on_iteration(0, centers, labels, sq)
    converged = False
    n_iter = 0
    totals = None
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is kept after the loop)
        centers, totals = update_centers(X, labels, centers, weights)
        new_labels, sq = assign(X, centers, x_sq=x_sq)
        if on_iteration is not None:
            on_iteration(n_iter, centers, new_labels, sq)
        if np.array_equal(new_labels, labels):
            converged = True
            break
        labels = new_labels
    labels = new_labels if max_iter > 0 else labels
    w = np.ones(len(labels)) if weights is None else weights
    cluster_weights = np.bincount(labels, weights=w, minlength=centers.shape[0])
    return LloydResult(centers=centers, labels=labels, sq_distances=sq,
                       cluster_weights=cluster_weights, n_iter=n_iter, converged=converged,
                       weights=None if weights is None else np.asarray(weights))


@dataclass
class DeviceLloydResult:
    """Output of :func:`lloyd_by_device`."""

    centers: np.ndarray          # (n_devices, k, d)
    labels: np.ndarray           # (n_samples,), local index in [0, k), sorted-row order
    sq_distances: np.ndarray     # (n_samples,)
    counts: np.ndarray           # (n_devices, k) points of every local cluster
    n_iter: int                  # update steps until every device reached its fixed point
    converged: bool
    totals: np.ndarray | None = None  # (n_devices, k) weight of every local cluster

    def __post_init__(self):
        if self.totals is None:
            self.totals = self.counts.astype(np.float64)


def lloyd_by_device(federation: Federation, init: np.ndarray, *,
                    center_mask: np.ndarray | None = None, max_iter: int = 300,
                    x_sq: np.ndarray | None = None,
                    weights: np.ndarray | None = None) -> DeviceLloydResult:
    """Lloyd's algorithm run independently on every device, all devices in lock-step.

    Parameters
    ----------
    federation : Federation
    init : ndarray of shape (n_devices, k, d)
        Initial centers of every device.
    center_mask : ndarray of shape (n_devices, k) of bool, optional
        False marks padding centers of devices with fewer than ``k`` centers.
    max_iter : int
        Update steps at most.
    weights : ndarray of shape (n_samples,), optional
        Row weights in the federation's sorted order (default: ``federation.weights``).
    """
    X = federation.X
    if weights is None:
        weights = federation.weights
    Z, k, _ = init.shape
    centers = np.array(init, dtype=X.dtype, copy=True)
    if x_sq is None:
        x_sq = squared_norms(X)
    segment_base = federation.device_of_row * k
    labels, sq = assign_by_device(federation, centers, center_mask=center_mask, x_sq=x_sq)
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is kept after the loop)
        centers, _ = update_centers(X, segment_base + labels, centers, weights)
        new_labels, sq = assign_by_device(federation, centers, center_mask=center_mask, x_sq=x_sq)
        if np.array_equal(new_labels, labels):
            converged = True
            break
        labels = new_labels
    if max_iter > 0:
        labels = new_labels
    counts = np.bincount(segment_base + labels, minlength=Z * k).reshape(Z, k)
    totals = None if weights is None else np.bincount(
        segment_base + labels, weights=weights, minlength=Z * k).reshape(Z, k)
    return DeviceLloydResult(centers=centers, labels=labels, sq_distances=sq, counts=counts,
                             n_iter=n_iter, converged=converged, totals=totals)

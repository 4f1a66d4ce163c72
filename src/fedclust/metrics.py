"""The metrics every paper reports, in one place: the k-means, k-median and partition costs,
the agreement with a reference labelling up to the best permutation of cluster names, Triebe &
Rajagopal's mean distance and Davies-Bouldin index of a model's centers, and k-FED's pairwise
separation (:func:`separation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from ._validation import check_data, check_int
from .lloyd import assign, segment_sums, sq_distances_to

__all__ = [
    "gaussians_found",
    "kmeans_cost",
    "kmedian_cost",
    "partition_cost",
    "mean_distance",
    "davies_bouldin_centers",
    "clustering_accuracy",
    "misclustering_rate",
    "misclustering_by_group",
    "contingency_matrix",
    "cluster_means",
    "spectral_norm",
    "center_gaps",
    "separation",
    "Separation",
]


def _check_cost_input(X, centers, labels):
    """``X``, ``centers`` and ``labels`` (None stays None) of a cost, validated."""
    X = check_data(X)
    centers = np.asarray(centers, dtype=X.dtype)
    if centers.ndim != 2 or centers.shape[1] != X.shape[1]:
        raise ValueError(f"centers must have shape (k, {X.shape[1]}); got {centers.shape}")
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (X.shape[0],):
            raise ValueError(f"labels must have shape ({X.shape[0]},); got {labels.shape}")
        if labels.min() < 0 or labels.max() >= len(centers):
            raise ValueError(f"labels must lie in [0, {len(centers)}); got "
                             f"{labels.min()}..{labels.max()}")
    return X, centers, labels


def kmeans_cost(X, centers, labels=None, sample_weight=None) -> float:
    """k-means cost ``sum_i w_i ||x_i - c(x_i)||^2``.

    Parameters
    ----------
    X : array-like of shape (n, d)
    centers : array-like of shape (k, d)
    labels : array-like of shape (n,), optional
        Center index of every row; by default each row goes to its nearest center.
    sample_weight : array-like of shape (n,), optional
    """
    X, centers, labels = _check_cost_input(X, centers, labels)
    if labels is not None:
        return labelled_cost(X, centers, labels, sample_weight)
    _, sq = assign(X, centers)
    if sample_weight is not None:
        sq = sq * np.asarray(sample_weight)
    return float(sq.sum())


def kmedian_cost(X, centers, labels=None, sample_weight=None) -> float:
    """k-median cost ``sum_i w_i ||x_i - c(x_i)||``: Euclidean distances, not squared
    (Balcan, Ehrlich & Liang 2013, Sec. 2: "the k-median cost is defined as
    ``sum_p d(p, x)``").

    Parameters
    ----------
    X : array-like of shape (n, d)
    centers : array-like of shape (k, d)
    labels : array-like of shape (n,), optional
        Center index of every row; by default each row goes to its nearest center (which is
        the nearest in distance as in squared distance).
    sample_weight : array-like of shape (n,), optional

    Examples
    --------
    >>> kmedian_cost([[0.0, 0.0], [3.0, 4.0], [10.0, 0.0]], [[0.0, 0.0], [10.0, 1.0]])
    6.0
    """
    X, centers, labels = _check_cost_input(X, centers, labels)
    if labels is None:
        # the distances from the differences, not the assignment's GEMM form: its rounding
        # (~eps ||x||^2) would become ~sqrt(eps) ||x|| under the square root near a center
        labels, _ = assign(X, centers)
    return labelled_cost(X, centers, labels, sample_weight, objective="kmedian")


def labelled_cost(X: np.ndarray, centers: np.ndarray, labels: np.ndarray,
                  sample_weight=None, *, objective: str = "kmeans") -> float:
    """:func:`kmeans_cost` (``objective="kmedian"``: :func:`kmedian_cost`) with given labels,
    on data already validated (a fitted federation's rows): no second pass over ``X`` to check
    it."""
    cost = sq_distances_to(X, centers, labels)  # squared distances, in float64
    if objective == "kmedian":
        cost = np.sqrt(cost)
    elif objective != "kmeans":
        raise ValueError(f"objective must be 'kmeans' or 'kmedian'; got {objective!r}")
    return float(cost.sum() if sample_weight is None else cost @ np.asarray(sample_weight))


def mean_distance(X, centers, labels=None) -> float:
    """Mean Euclidean (not squared) distance of every row to its center: Triebe & Rajagopal's
    "mean euclidean intra-cluster distance" (Sec. 2.2), the k-median cost over ``n``.

    Examples
    --------
    >>> mean_distance([[0.0], [1.0], [10.0]], [[0.0], [10.0]])
    0.3333333333333333
    """
    X, centers, labels = _check_cost_input(X, centers, labels)
    return kmedian_cost(X, centers, labels) / X.shape[0]


def davies_bouldin_centers(X, centers, labels=None) -> float:
    """Davies-Bouldin index of a model's centers (Triebe & Rajagopal 2019, Sec. 2.2): the mean
    over clusters ``i`` holding rows of ``max_{j != i} (s_i + s_j) / ||c_i - c_j||``, with
    ``s_i`` the mean distance of cluster ``i``'s rows to the center ``c_i`` (Davies & Bouldin,
    1979).

    The centers are the model's, as Triebe & Rajagopal's code computes it (``utils_stats.
    davies_bouldin``); scikit-learn's ``davies_bouldin_score`` uses the clusters' means
    instead, which differ from the model's centers when it has not converged. A center no row
    is nearest to takes part in neither the mean nor the maxima (its ``s`` is undefined);
    fewer than two such clusters give NaN, as an index of one cluster is undefined.

    Examples
    --------
    >>> X = [[0.0], [2.0], [10.0], [12.0]]
    >>> davies_bouldin_centers(X, [[1.0], [11.0]])   # (1 + 1) / 10
    0.2
    """
    X, centers, labels = _check_cost_input(X, centers, labels)
    if labels is None:
        labels, _ = assign(X, centers)
    k = len(centers)
    dist = np.sqrt(sq_distances_to(X, centers, labels))
    counts = np.bincount(labels, minlength=k)
    used = counts > 0
    if used.sum() < 2:
        return float("nan")
    spread = np.bincount(labels, weights=dist, minlength=k)[used] / counts[used]
    c = centers[used].astype(np.float64)
    gaps = np.sqrt(((c[:, None, :] - c[None, :, :]) ** 2).sum(axis=-1))
    with np.errstate(divide="ignore"):
        ratio = (spread[:, None] + spread[None, :]) / gaps
    np.fill_diagonal(ratio, -np.inf)
    return float(ratio.max(axis=1).mean())


def partition_cost(X, labels, sample_weight=None) -> float:
    """The k-means cost of a clustering itself (k-FED, Eq. 1): every point to the (weighted)
    mean of its own cluster, ``phi(T) = sum_j sum_{i in T_j} ||A_i - mu(T_j)||^2``.

    Unlike :func:`kmeans_cost` with centers, this needs no centers: it is the cost of the
    partition, the smallest any set of centers can give with these labels.
    """
    X = check_data(X)
    labels = np.unique(np.asarray(labels), return_inverse=True)[1]
    if labels.shape != (X.shape[0],):
        raise ValueError(f"labels must have shape ({X.shape[0]},); got {labels.shape}")
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    sums, totals = segment_sums(X, labels, int(labels.max()) + 1, w)
    means = sums / totals[:, None]
    return kmeans_cost(X, means, labels, sample_weight)


def contingency_matrix(labels_true, labels_pred) -> np.ndarray:
    """Counts ``C[i, j]`` of rows with the ``i``-th true and the ``j``-th predicted label."""
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    if labels_true.shape != labels_pred.shape or labels_true.ndim != 1:
        raise ValueError(
            f"labels_true and labels_pred must be 1-D of equal length; got {labels_true.shape} "
            f"and {labels_pred.shape}"
        )
    _, t = np.unique(labels_true, return_inverse=True)
    _, p = np.unique(labels_pred, return_inverse=True)
    n_t, n_p = t.max(initial=-1) + 1, p.max(initial=-1) + 1
    return np.bincount(t * n_p + p, minlength=n_t * n_p).reshape(n_t, n_p)


def clustering_accuracy(labels_true, labels_pred) -> float:
    """Fraction of rows correctly clustered under the best one-to-one matching of labels.

    The matching maximises agreement (``scipy.optimize.linear_sum_assignment`` on the
    contingency matrix); when the two labellings have different numbers of clusters, the
    unmatched clusters count as wrong.
    """
    C = contingency_matrix(labels_true, labels_pred)
    if C.size == 0:
        raise ValueError("cannot score an empty labelling")
    rows, cols = linear_sum_assignment(C, maximize=True)
    return float(C[rows, cols].sum() / C.sum())


def misclustering_rate(labels_true, labels_pred) -> float:
    """``1 - clustering_accuracy``: the share of rows misclustered under the best matching."""
    return 1.0 - clustering_accuracy(labels_true, labels_pred)


def misclustering_by_group(labels_true, labels_pred, groups, n_groups: int | None = None):
    """Misclustering rate within each group (e.g. each machine), each with its own best matching.

    Returns
    -------
    rates : ndarray of shape (n_groups,)
        ``nan`` for an empty group.
    """
    groups = np.asarray(groups)
    _, t = np.unique(np.asarray(labels_true), return_inverse=True)
    _, p = np.unique(np.asarray(labels_pred), return_inverse=True)
    if not (groups.shape == t.shape == p.shape):
        raise ValueError("labels_true, labels_pred and groups must have the same length")
    G = int(groups.max()) + 1 if n_groups is None else n_groups
    n_t, n_p = t.max(initial=-1) + 1, p.max(initial=-1) + 1
    counts = np.bincount((groups * n_t + t) * n_p + p, minlength=G * n_t * n_p)
    counts = counts.reshape(G, n_t, n_p)
    rates = np.full(G, np.nan)
    for g in range(G):
        total = counts[g].sum()
        if total:
            rows, cols = linear_sum_assignment(counts[g], maximize=True)
            rates[g] = 1.0 - counts[g][rows, cols].sum() / total
    return rates


def cluster_means(X, labels, n_clusters: int | None = None):
    """Mean and size of every cluster of ``labels`` (labels in ``0..k-1``).

    Returns
    -------
    means : ndarray of shape (k, d)
    sizes : ndarray of shape (k,) of int
    """
    labels = np.asarray(labels)
    k = int(labels.max()) + 1 if n_clusters is None else n_clusters
    sums, sizes = segment_sums(X, labels, k)
    if np.any(sizes == 0):
        raise ValueError(f"clusters {np.flatnonzero(sizes == 0).tolist()} are empty")
    return sums / sizes[:, None], sizes.astype(np.int64)


def spectral_norm(M: np.ndarray, *, chunk_rows: int = 65536) -> float:
    """Largest singular value of ``M`` (exact, via the eigenvalues of the smaller Gram matrix).

    The Gram matrix ``M^T M`` is accumulated in row chunks, so a tall ``M`` needs only
    ``O(d^2)`` extra memory.
    """
    M = np.asarray(M, dtype=np.float64)
    n, d = M.shape
    if n == 0 or d == 0:
        return 0.0
    if n < d:
        gram = M @ M.T
    else:
        gram = np.zeros((d, d))
        for start in range(0, n, chunk_rows):
            block = M[start:start + chunk_rows]
            gram += block.T @ block
    top = np.linalg.eigvalsh(gram)[-1]
    return float(np.sqrt(max(top, 0.0)))


@dataclass
class Separation:
    """Pairwise separation of a clustering (see :func:`separation`).

    Attributes
    ----------
    c : ndarray of shape (k, k)
        ``c[r, s] = ||mu_r - mu_s|| / (sqrt(m0) (Delta_r + Delta_s))``: a pair satisfies k-FED's
        active separation requirement with constant ``c`` when ``c_rs >= c``. The diagonal is
        ``inf``.
    delta : ndarray of shape (k,)
        ``Delta_r = k' ||A - C||_2 / sqrt(n_r)``.
    means : ndarray of shape (k, d)
    sizes : ndarray of shape (k,)
    residual_norm : float
        ``||A - C||_2``, the spectral norm of the data minus its cluster means.
    device_clusters, devices_per_cluster : int
        ``k'`` and ``m0``.
    """

    c: np.ndarray
    delta: np.ndarray
    means: np.ndarray
    sizes: np.ndarray
    residual_norm: float
    device_clusters: int = 1
    devices_per_cluster: int = 1

    def pairs(self):
        """``(r, s, c_rs)`` for every unordered pair ``r < s``."""
        r, s = np.triu_indices(self.c.shape[0], k=1)
        return r, s, self.c[r, s]

    @property
    def minimum(self) -> float:
        """The separation of the whole clustering: the smallest ``c_rs`` over pairs."""
        return float(self.pairs()[2].min()) if self.c.shape[0] > 1 else float("inf")

    def lam(self, min_device_size: int) -> float:
        """``lambda = sqrt(k') ||A - C||_2 / sqrt(n_min)``, ``n_min`` the fewest points on a
        device (Eq. 4)."""
        return float(np.sqrt(self.device_clusters) * self.residual_norm /
                     np.sqrt(check_int(min_device_size, "min_device_size", low=1)))

    def inactive(self, min_device_size: int) -> np.ndarray:
        """``||mu_r - mu_s|| / (10 sqrt(m0) lambda)`` for every pair: at least 1 when the pair
        satisfies the inactive separation requirement (Theorem 3.1). Diagonal ``inf``."""
        gaps = self.c * np.sqrt(self.devices_per_cluster) * (self.delta[:, None] +
                                                             self.delta[None, :])
        out = gaps / (10.0 * np.sqrt(self.devices_per_cluster) * self.lam(min_device_size))
        np.fill_diagonal(out, np.inf)
        return out


def center_gaps(means: np.ndarray) -> np.ndarray:
    """Euclidean distances between every pair of rows of ``means``."""
    sq = np.einsum("rd,rd->r", means, means)
    return np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * means @ means.T, 0.0))


def separation(X, labels, *, device_clusters: int, devices_per_cluster: int) -> Separation:
    """Pairwise separation ``c_rs`` of the clustering ``labels`` of ``X`` (k-FED; App. B.2
    measures it on the real data sets).

    With ``A`` the data matrix and ``C`` the matrix whose row ``i`` is the mean of row ``i``'s
    cluster (Dennis, Li & Smith, 2021, Sec. 3.2, Eq. 4 and Definition 3.5):

    ``Delta_r = k' ||A - C||_2 / sqrt(n_r)`` and
    ``c_rs = ||mu_r - mu_s|| / (sqrt(m0) (Delta_r + Delta_s))``,

    where ``||.||_2`` is the spectral norm, ``n_r`` the size of cluster ``r``, ``k'`` the most
    clusters on a device and ``m0`` bounds how thinly a cluster is spread
    (``|T_r^(z)| >= |T_r| / m0``). A pair satisfies the active separation requirement with
    constant ``c`` when ``c_rs >= c``.

    *Reconstructed* (the text's primes and radicals are lost): ``Delta_r`` carries ``k'``, not
    ``sqrt(k')``, and ``m0`` enters as ``sqrt(m0)``. The remark after Theorem 3.1 (for
    ``k' ~ k`` the active requirement is ``Omega(k)`` against the centralized ``Omega(sqrt k)``)
    and Corollary 1.1 (for ``k' <= sqrt(k)`` it reduces to the centralized ``sqrt(k)``) need the
    ``k'``; Lemma 4's step ``2 sqrt(m0) sqrt(n_r^(z) / n_r) >= 2`` and Lemma 5's
    ``||A - C|| / sqrt(n_r^(z)) <= sqrt(m0) ||A - C|| / sqrt(n_r)`` need ``sqrt(m0)``, from
    ``n_r^(z) >= n_r / m0``. With ``k' = m0 = 1`` (the separation of a data set itself, as the
    pipeline's Fig 5 uses) both readings agree.

    Parameters
    ----------
    X : array-like of shape (n, d)
    labels : array-like of shape (n,)
        Cluster of every row, ``0..k-1``.
    device_clusters : int
        ``k'``.
    devices_per_cluster : int
        ``m0``.
    """
    X = check_data(X)
    labels = np.asarray(labels)
    device_clusters = check_int(device_clusters, "device_clusters", low=1)
    devices_per_cluster = check_int(devices_per_cluster, "devices_per_cluster", low=1)
    means, sizes = cluster_means(X, labels)
    residual_norm = spectral_norm(X - means[labels])
    delta = device_clusters * residual_norm / np.sqrt(sizes)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = center_gaps(means) / (np.sqrt(devices_per_cluster) *
                                  (delta[:, None] + delta[None, :]))
    np.fill_diagonal(c, np.inf)
    return Separation(c=c, delta=delta, means=means, sizes=sizes, residual_norm=residual_norm,
                      device_clusters=device_clusters, devices_per_cluster=devices_per_cluster)


def gaussians_found(centers, means) -> int:
    """How many of the 1-D Gaussians' means have a centroid of their own: a centroid whose
    nearest mean it is, within half the smallest gap between two means. A run that separates
    the Gaussians finds all of them; one that stops with two centroids on one Gaussian (a
    local optimum) leaves another without.

    Examples
    --------
    >>> gaussians_found(np.array([[1.02], [1.9], [3.1], [4.0], [4.95]]), [1, 2, 3, 4, 5])
    5
    >>> gaussians_found(np.array([[0.9], [1.1], [2.5], [4.0], [5.0]]), [1, 2, 3, 4, 5])
    3
    """
    means = np.sort(np.asarray(means, dtype=np.float64))
    centers = np.asarray(centers, dtype=np.float64)[:, 0]
    half_gap = np.diff(means).min() / 2 if len(means) > 1 else np.inf
    nearest = np.abs(centers[:, None] - means[None, :]).argmin(axis=1)
    close = np.abs(centers - means[nearest]) < half_gap
    return int(len(np.unique(nearest[close])))

"""k-FED: one-shot federated clustering (Dennis, Li & Smith, ICML 2021). Every device clusters
its own data with the spectral algorithm of Awasthi & Sheffet (2012) (Algorithm 1,
:func:`awasthi_sheffet`) and sends its local centers to the server, once; the server clusters
the local centers (Algorithm 2, :meth:`KFed.server_step`) and returns the cluster of each, and
every point takes the cluster of its local center. :class:`KFed` is the estimator. The algorithm
step by step and every choice where it departs from the paper or the authors' code, with its
measurement: docs/algorithms.md, *k-FED*.
"""

from __future__ import annotations

import contextlib
import hashlib
import numbers
from dataclasses import dataclass

import numba
import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._jit import njit, prange
from .._validation import (
    check_devices,
    check_random_state,
    fit_rng,
)
from ..communication import SERVER
from ..exceptions import InfeasibleSettingError
from ..federation import Federation
from ..lloyd import (
    _FASTMATH,
    assign,
    lloyd,
    lloyd_by_device,
    sq_distances_to,
    update_centers,
)
from ..rounds import sample_participants
from ..seeding import greedy_uniforms, kmeans_plusplus, kmeans_plusplus_by_device
from ..subspace import gaussian_start, top_subspaces_by_device
from ._base import (
    POSITIVE_INT,
    TOL,
    FederatedClusteringMixin,
    warn_not_converged,
)

__all__ = ["KFed", "awasthi_sheffet", "farthest_point_seeding", "server_rounds",
           "server_clustering", "kmeans_server", "LocalClustering", "LocalDraws", "local_draws",
           "seeded_clusters"]

_MAX_SERVER_ROUNDS = 1000  # "converge" stops at a fixed point, at the latest after this many


@dataclass
class LocalClustering:
    """Result of Algorithm 1 on every device of a federation.

    Attributes
    ----------
    centers : ndarray of shape (n_devices, k', d)
        Local centers (``k'`` the largest ``k^(z)``); rows where ``valid`` is False are padding.
    valid : ndarray of shape (n_devices, k') of bool
        True for a local cluster that holds at least one point.
    sizes : ndarray of shape (n_devices, k')
        Points (total weight, with sample weights) in every local cluster.
    labels : ndarray of shape (n_samples,)
        Local cluster (``0..k^(z)-1``) of every row, in the federation's sorted order.
    n_iter : int
        Lloyd update steps until every device reached its fixed point.
    converged : bool
        Whether every device reached its fixed point within ``max_iter`` steps.
    """

    centers: np.ndarray
    valid: np.ndarray
    sizes: np.ndarray
    labels: np.ndarray
    n_iter: int
    converged: bool = True


@njit(parallel=True, cache=True)
def _proximity_kernel(points, average, w, weighted, offsets, seed_rows, ratio, sums,
                      totals):  # pragma: no cover (compiled; awasthi_sheffet is tested)
    p = points.shape[1]
    K = seed_rows.shape[1]
    for z in prange(len(offsets) - 1):
        k = 0
        while k < K and seed_rows[z, k] >= 0:
            k += 1
        for row in range(offsets[z], offsets[z + 1] if k else offsets[z]):
            closest, second, arg = np.inf, np.inf, 0
            for j in range(k):
                dist = 0.0
                for f in range(p):
                    diff = points[row, f] - points[seed_rows[z, j], f]
                    dist += diff * diff
                dist = np.sqrt(dist)
                if dist < closest:
                    second, closest, arg = closest, dist, j
                elif dist < second:
                    second = dist
            if ratio * closest <= second:
                wi = w[row] if weighted else 1.0
                seg = z * K + arg
                totals[seg] += wi
                for f in range(average.shape[1]):
                    sums[seg, f] += wi * average[row, f]


def _proximity_means(federation, points, average, seed_rows, ratio, weights):
    """Algorithm 1, step 3 (Awasthi & Sheffet, step 2) on every device: keep the points
    ``ratio`` times closer to one seed than to every other, and average them per seed.

    ``S_r = {i : ratio * ||A_hat_i - nu_r|| <= ||A_hat_i - nu_s|| for all s != r}`` measured in
    ``points`` (the projected rows); ``theta_r`` is the (weighted) mean of ``average`` over
    ``S_r`` (pass the original rows as ``average`` for the original means); an empty ``S_r``
    keeps its seed point. One compiled pass over every device's rows, the sums taken as the
    rows are filtered.

    Returns
    -------
    theta : ndarray of shape (n_devices, k', p)
    """
    Z, k = seed_rows.shape
    sums, totals = np.zeros((Z * k, average.shape[1])), np.zeros(Z * k)
    w = np.empty(0) if weights is None else np.asarray(weights, dtype=np.float64)
    _proximity_kernel(points, average, w, weights is not None, federation.offsets, seed_rows,
                      float(ratio), sums, totals)
    theta = average[np.maximum(seed_rows, 0)].astype(np.float64)  # (Z, k, p)
    filled = (totals > 0).reshape(Z, k)
    theta[filled] = (sums / np.where(totals > 0, totals, 1.0)[:, None]).reshape(Z, k, -1)[filled]
    return theta


def seeded_clusters(drawable, per_device) -> np.ndarray:
    """``k^(z)`` of the devices that seed their clusters (Algorithm 1, steps 1-3), 0 for a
    device with at most ``k^(z)`` rows of positive weight (``drawable``), which sends those
    rows as its centers instead."""
    return np.where(np.asarray(drawable) <= per_device, 0, per_device)


def _drawable_rows(federation) -> np.ndarray:
    """Rows of positive weight on every device."""
    return np.bincount(federation.device_of_row, weights=federation.row_weights > 0,
                       minlength=federation.n_devices)


def _all_points_as_centers(federation, per_device, init, valid):
    """Devices with at most ``k^(z)`` rows of positive weight send every such row as a center."""
    w = federation.row_weights
    tiny = seeded_clusters(_drawable_rows(federation), per_device) == 0
    rows = np.flatnonzero(tiny[federation.device_of_row] & (w > 0))
    device = federation.device_of_row[rows]
    slot = np.arange(len(rows)) - np.searchsorted(device, device)  # rank within its device
    init[device, slot] = federation.X[rows]
    valid[device, slot] = True
    return tiny


def _device_clusters(device_clusters, n_devices: int) -> np.ndarray:
    """``k^(z)`` of every one of ``n_devices`` devices (sorted device order)."""
    Z = n_devices
    if isinstance(device_clusters, numbers.Integral) and not isinstance(device_clusters, bool):
        return np.full(Z, int(device_clusters), dtype=np.int64)
    per = np.asarray(device_clusters)
    if per.shape != (Z,) or not np.issubdtype(per.dtype, np.integer):
        raise ValueError(f"device_clusters must be an int or one int per device ({Z}, in the "
                         f"order of np.unique(devices)); got {device_clusters!r}")
    if per.min() < 1:
        raise ValueError(f"device_clusters must be >= 1 on every device; got {per.min()}")
    return per.astype(np.int64)


@dataclass
class LocalDraws:
    """The random draws of :func:`awasthi_sheffet` on every device, drawn apart
    (:func:`local_draws`), in the order that function draws them from one generator.

    A device that holds only its own rows (a real deployment) runs Algorithm 1 with
    :meth:`for_device`'s draws and finds exactly the local centers it finds in the
    federation-wide call with the same generator.

    Attributes
    ----------
    seeded : ndarray of shape (n_devices,)
        ``k^(z)`` of the devices that seed (:func:`seeded_clusters`), 0 for the others.
    start : ndarray of shape (n_features, max(seeded) + oversample) or None
        Step 1's shared Gaussian start (:func:`fedclust.subspace.gaussian_start`); None
        without the projection.
    uniforms : ndarray of shape (n_devices, max(seeded), trials)
        Step 2's draws (:func:`fedclust.seeding.greedy_uniforms`), one block per device.
    """

    seeded: np.ndarray
    start: np.ndarray | None
    uniforms: np.ndarray

    def for_device(self, position: int) -> LocalDraws:
        """The draws of the device at ``position`` (sorted device order), as a one-device
        :class:`LocalDraws`: its block of uniforms, and the start's columns its subspace
        iteration reads (its ``k^(z)`` and the same oversampling)."""
        seeded = self.seeded[position:position + 1]
        start = None
        if self.start is not None:
            oversample = self.start.shape[1] - int(self.seeded.max())
            start = self.start[:, :int(seeded[0]) + oversample]
        return LocalDraws(seeded=seeded, start=start,
                          uniforms=self.uniforms[position:position + 1])


def local_draws(seeded, n_features: int, random_state=None, *,
                projection: bool = True) -> LocalDraws | None:
    """Draw what :func:`awasthi_sheffet` draws, in its order, for devices that seed
    ``seeded`` clusters (:func:`seeded_clusters`); None when no device seeds (nothing is
    drawn). The server of a deployment calls it with the fit's generator and sends every
    device its :meth:`LocalDraws.for_device`."""
    seeded = np.asarray(seeded, dtype=np.int64)
    if not seeded.any():
        return None
    rng = check_random_state(random_state)
    start = gaussian_start(n_features, seeded, rng) if projection else None
    return LocalDraws(seeded=seeded, start=start, uniforms=greedy_uniforms(seeded, rng))


def awasthi_sheffet(federation: Federation, device_clusters, *, random_state=None,
                    proximity_ratio: float = 3.0, projection: bool = True,
                    local_means: str = "projected", max_iter: int = 300,
                    draws: LocalDraws | None = None) -> LocalClustering:
    """k-FED's Algorithm 1 run on every device of ``federation``.

    Every step runs on all devices at once, no Python loop over devices: step 1 through
    :func:`fedclust.subspace.top_subspaces_by_device`, step 2 through
    :func:`fedclust.seeding.kmeans_plusplus_by_device`, step 3 in one compiled pass, step 4
    (Lloyd's algorithm to convergence on the original data) through
    :func:`fedclust.lloyd.lloyd_by_device`.

    Parameters
    ----------
    federation : Federation
    device_clusters : int or array-like of shape (n_devices,)
        ``k^(z)``, the number of clusters each device looks for (one value for all, or one per
        device in sorted device order).
    random_state : int, Generator or None
    proximity_ratio : float
        The factor of step 3 (3 in Awasthi & Sheffet).
    projection : bool
        Project onto the top-``k^(z)`` singular subspace before seeding (step 1). Turning it off
        is an ablation, not the paper's algorithm.
    local_means : {"projected", "original"}
        Lloyd's starting centers: the projected or the original means of ``S_r`` (see
        docs/algorithms.md, *k-FED*).
    max_iter : int
        Lloyd update steps at most (step 4 runs "until convergence").
    draws : LocalDraws, optional
        The random draws (:func:`local_draws`, for this federation's devices) instead of new
        ones from ``random_state``: a device holding only its rows passes its
        :meth:`LocalDraws.for_device`.
    """
    rng = check_random_state(random_state)
    per_device = _device_clusters(device_clusters, federation.n_devices)
    k = int(per_device.max())
    Z, d = federation.n_devices, federation.n_features
    init = np.zeros((Z, k, d), dtype=federation.X.dtype)
    valid = np.zeros((Z, k), dtype=bool)
    weights = federation.weights
    tiny = _all_points_as_centers(federation, per_device, init, valid)
    seeded = np.where(tiny, 0, per_device)
    if draws is None:
        draws = local_draws(seeded, d, rng, projection=projection)
    elif not np.array_equal(draws.seeded, seeded):
        raise ValueError(f"draws were drawn for devices seeding {draws.seeded.tolist()} "
                         f"clusters; these devices seed {seeded.tolist()}")
    if seeded.any():
        # step 1: every device's top-k^(z) singular subspace (the identity when d <= k^(z))
        if projection:
            sub = top_subspaces_by_device(federation, seeded, weights=weights,
                                          start=draws.start)
            points = sub.projected
        else:
            points = federation.X
        # step 2: a constant-factor approximation on the projected points (k-means++)
        seed_rows = kmeans_plusplus_by_device(federation, seeded, points=points,
                                              uniforms=draws.uniforms)
        # step 3: proximity filter in the projected space; means of the projected rows mapped
        # back (the authors' code), or of the original rows (the text's mu(S_r))
        if projection and local_means == "projected":
            theta = np.einsum("zkw,zdw->zkd", _proximity_means(
                federation, points, points, seed_rows, proximity_ratio, weights), sub.bases)
        else:
            theta = _proximity_means(federation, points, federation.X, seed_rows,
                                     proximity_ratio, weights)
        width = seed_rows.shape[1]
        init[~tiny, :width] = theta[~tiny]
        valid[~tiny, :width] = seed_rows[~tiny] >= 0
    result = lloyd_by_device(federation, init, center_mask=valid, max_iter=max_iter)
    sizes = result.counts if weights is None else result.totals
    return LocalClustering(centers=result.centers, valid=valid & (result.counts > 0),
                           sizes=sizes, labels=result.labels, n_iter=result.n_iter,
                           converged=bool(result.converged))


@njit(cache=True, fastmath=_FASTMATH)
def _farthest_kernel(points, min_sq, chosen, n_first, rows, slot_of, n_rows,
                     scratch):  # pragma: no cover (compiled)
    """Steps 3-6 from the ``n_first`` rows already in ``chosen``: the farthest row joins, every
    row's distance to the chosen is updated, until ``chosen`` is full. Exact differences (not
    the GEMM form), as :func:`fedclust.lloyd.sq_distances_to` takes them, so that a duplicate
    of a chosen row is at 0. Returns how many rows were chosen: fewer than ``len(chosen)``
    when every row is at distance 0 from a chosen one.

    A chosen row's squared distances to every row are kept in ``rows[slot_of[far]]`` while
    slots last (``n_rows[0]`` of them in use), for the next start that chooses it: the server's
    starts choose mostly the same few hundred rows, and a kept row holds the same numbers.
    Without a free slot they go to ``scratch``."""
    n, d = points.shape
    for c in range(n_first, len(chosen)):
        far = np.argmax(min_sq)
        if min_sq[far] <= 0.0:
            return c
        chosen[c] = far
        slot = slot_of[far]
        if slot >= 0:
            dist = rows[slot]
        else:
            if n_rows[0] < rows.shape[0]:
                slot_of[far] = n_rows[0]
                dist = rows[n_rows[0]]
                n_rows[0] += 1
            else:
                dist = scratch
            for i in range(n):
                acc = 0.0
                for f in range(d):
                    diff = points[i, f] - points[far, f]
                    acc += diff * diff
                dist[i] = acc
        for i in range(n):
            if dist[i] < min_sq[i]:
                min_sq[i] = dist[i]
    return len(chosen)


# memory for the distance rows the server's starts share (see _farthest_kernel)
_FARTHEST_CACHE_BYTES = 64 * 2**20


class _FarthestCache:
    """Squared distances from chosen rows to every row of ``points``, kept across the
    farthest-point seedings of several starts on the same points."""

    def __init__(self, n_points: int, slots: int | None = None):
        if slots is None:  # as many rows as fit in _FARTHEST_CACHE_BYTES
            slots = min(n_points, _FARTHEST_CACHE_BYTES // (8 * max(n_points, 1)))
        self.rows = np.empty((slots, n_points))
        self.slot_of = np.full(n_points, -1, dtype=np.int64)
        self.n_rows = np.zeros(1, dtype=np.int64)


def farthest_point_seeding(points: np.ndarray, first: np.ndarray, n_clusters: int, *,
                           cache: _FarthestCache | None = None,
                           repeat: bool = False) -> np.ndarray:
    """Algorithm 2, steps 2-6: start from the rows ``first`` and repeatedly add the row farthest
    from those chosen, until ``n_clusters`` rows are chosen (one compiled loop: the server
    tries many starts, each of ``n_clusters`` steps over a few thousand local centers).

    ``cache``: distance rows of earlier calls on the same ``points`` (:class:`_FarthestCache`),
    reused where a start chooses a row an earlier one chose (the same numbers). ``repeat``:
    when fewer than ``n_clusters`` rows are distinct, the chosen rows are repeated (duplicate
    seeds: the data hold fewer distinct points than clusters, which ``fit`` has warned of);
    otherwise that is an error.

    Returns
    -------
    chosen : ndarray of shape (n_clusters,)
        Row indices into ``points``; ``first`` comes first.
    """
    first = np.asarray(first, dtype=np.int64)[:n_clusters]
    chosen = np.empty(n_clusters, dtype=np.int64)
    chosen[:len(first)] = first
    points = np.ascontiguousarray(points)
    _, min_sq = assign(points, points[first])
    if cache is None:
        cache = _FarthestCache(len(points), slots=0)
    n_chosen = _farthest_kernel(points, min_sq.astype(np.float64), chosen, len(first),
                                cache.rows, cache.slot_of, cache.n_rows, np.empty(len(points)))
    if n_chosen < n_clusters:
        if repeat:
            chosen[n_chosen:] = chosen[np.arange(n_clusters - n_chosen) % n_chosen]
            return chosen
        raise InfeasibleSettingError(
            f"only {n_chosen} distinct local centers reached the server; k-FED cannot form "
            f"n_clusters={n_clusters} clusters (Algorithm 2, steps 2-6: the server seeds k "
            f"distinct centers among the local centers)"
        )
    return chosen


class _ServerPaths:
    """The partitions of the local centers that earlier starts' Lloyd rounds went through, each
    with the rounds its start still ran from it to its fixed point.

    After a partition in which every cluster holds weight, the centers are that partition's
    means -- the same numbers whatever the clusters are called, as each mean adds its rows in
    row order -- so the rounds that follow are determined by the partition alone: a later start
    whose rounds reach one ends where the earlier start ended, with the same centers (renamed)
    and the same criterion (an exact tie between two centers' distances aside), and so is never
    kept (ties: the earlier start). Its remaining rounds are skipped: on well-separated data
    most starts reach the same partition in their first round. Partitions are compared up to
    the names of their clusters (each named by its first row), by a 128-bit digest."""

    def __init__(self, n_clusters: int, weights=None):
        self.n_clusters = n_clusters
        self.weights = weights
        self.rounds_left: dict[bytes, int] = {}

    def key(self, labels: np.ndarray) -> bytes | None:
        """The partition's digest; None when a cluster is empty or weightless (its center
        then depends on the rounds before)."""
        k = self.n_clusters
        held = np.bincount(labels, weights=self.weights, minlength=k)
        if held.min() <= 0:
            return None
        _, first = np.unique(labels, return_index=True)
        name = np.empty(k, dtype=np.int32)
        name[np.argsort(first)] = np.arange(k, dtype=np.int32)
        return hashlib.blake2b(name[labels].tobytes(), digest_size=16).digest()

    def record(self, path: list, n_rounds: int, left_after: int = 0) -> None:
        """The partitions of rounds ``1..len(path)`` of a start whose rounds ended (at a fixed
        point) ``left_after`` rounds after round ``n_rounds``."""
        for position, key in enumerate(path, start=1):
            if key is not None:
                self.rounds_left.setdefault(key, n_rounds - position + left_after)


def server_rounds(points: np.ndarray, seeds: np.ndarray, rounds, weights=None, *,
                  paths: _ServerPaths | None = None):
    """Algorithm 2, step 7: Lloyd rounds on the local centers from the seeds ``M``.

    One round assigns every local center to its nearest seed (the sets ``tau``) and moves every
    center to the (weighted) mean of its set; the labels are that assignment. ``rounds="converge"``
    repeats until the assignment no longer changes (so the labels are the final centers' nearest).

    ``paths`` (``rounds="converge"`` only): the partitions earlier starts went through
    (:class:`_ServerPaths`); rounds that reach one of them stop there and return None (they
    would end where that start ended), and a start that reaches its fixed point adds its own.

    Returns
    -------
    centers : ndarray of shape (k, d)
    labels : ndarray of shape (n_points,)
        The set ``tau`` of every local center (the assignment the centers are the means of).
    n_rounds : int
        (None instead of the three when the rounds reached a partition in ``paths``.)
    """
    limit = _MAX_SERVER_ROUNDS if rounds == "converge" else int(rounds)
    centers = np.array(seeds, dtype=np.float64, copy=True)
    labels = None
    n_rounds = 0
    path = []
    for n_rounds in range(1, limit + 1):  # noqa: B007 (the count is kept after the loop)
        tau = assign(points, centers)[0]
        if labels is not None and np.array_equal(tau, labels):
            n_rounds -= 1  # the last assignment changed nothing: no new round
            break
        labels = tau
        if paths is not None:
            key = paths.key(labels)
            left = paths.rounds_left.get(key)
            # the earlier start confirmed its fixed point within the limit; so would this one
            if left is not None and n_rounds + left < limit:
                paths.record(path, n_rounds, left)
                return None
            path.append(key)
        centers, _ = update_centers(points, labels, centers, weights)
    else:
        return centers, labels, n_rounds  # the limit, not a fixed point: nothing to record
    if paths is not None:
        paths.record(path, n_rounds)
    return centers, labels, n_rounds


def kmeans_server(points, n_clusters: int, rounds, weights, rng, *,
                  n_init: int = 10):
    """The server of ``device_clusters="auto"`` (not in the paper): weighted k-means of the
    local centers, ``n_init`` restarts of scikit-learn's greedy k-means++ then Lloyd's rounds
    (``rounds``: a number, or ``"converge"``), the lowest weighted cost kept. Algorithm 2's
    farthest-point seeding starts from a device's ``k^(z)`` centers, which with
    ``k^(z) = k`` would be all of ``M``, and then prefers outlying local centers.

    Returns
    -------
    init, centers, labels, n_rounds
        The kept restart's seeds, centers (float64), the cluster of every local center and
        its Lloyd rounds.
    """
    from sklearn.cluster import kmeans_plusplus as greedy_kmeans_plusplus

    X = np.ascontiguousarray(points, dtype=np.float64)
    max_iter = _MAX_SERVER_ROUNDS if rounds == "converge" else int(rounds)
    drawable = len(X) if weights is None else int((weights > 0).sum())
    best = None
    with _one_thread():
        for seed in rng.integers(2**31 - 1, size=n_init):
            if drawable >= n_clusters:
                init, _ = greedy_kmeans_plusplus(X, n_clusters, sample_weight=weights,
                                                 random_state=int(seed))
            else:  # fewer distinct points than clusters (fit warned): seeds repeat
                init, _ = kmeans_plusplus(X, n_clusters, sample_weight=weights,
                                          random_state=int(seed))
            result = lloyd(X, init, weights=weights, max_iter=max_iter)
            if best is None or result.inertia < best[1].inertia:
                best = (init, result)
    init, result = best
    return init, result.centers, result.labels, result.n_iter


@contextlib.contextmanager
def _one_thread():
    """The server's passes over a few hundred local centers on one thread: waking the kernels'
    thread pool costs more than such a pass (measured 25x slower on a loaded machine)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _server_spread(points, centers, labels, weights=None) -> float:
    """Total (weighted) distance from every local center to its global center: the criterion
    the server compares its starts by (docs/algorithms.md, *k-FED*, server_starts)."""
    dist = np.sqrt(sq_distances_to(points, centers, labels))
    return float(dist.sum() if weights is None else np.dot(weights, dist))


def server_clustering(points, devices, starts, n_clusters: int, rounds, weights=None, *,
                      repeat: bool = False):
    """Algorithm 2, steps 2-7, from the local centers of each device in ``starts``; the
    clustering of the local centers with the smallest total (weighted) distance from each local
    center to its global center is kept (ties: the earlier start). With ``rounds="converge"``,
    a start whose rounds reach a partition an earlier start went through stops there
    (:class:`_ServerPaths`): it would end where that start ended.

    Parameters
    ----------
    points : ndarray of shape (n_local, d)
        The local centers that reached the server.
    devices : ndarray of shape (n_local,)
        The device of each local center.
    starts : array-like
        Devices whose centers start ``M`` (step 2), in the order they are tried.
    n_clusters : int
    rounds : int or "converge"
        Lloyd rounds of step 7 (:func:`server_rounds`).
    weights : ndarray of shape (n_local,), optional
        Weights of the local centers in Lloyd's means and in the criterion.
    repeat : bool
        Repeat seeds when fewer than ``n_clusters`` local centers are distinct
        (:func:`farthest_point_seeding`).

    Returns
    -------
    init : ndarray of shape (n_clusters, d)
        The seeds ``M`` of the kept start.
    centers, labels, n_rounds
        As :func:`server_rounds`, for the kept start.
    start : the kept start (an element of ``starts``)
    """
    best = None
    points = np.ascontiguousarray(points)
    cache = _FarthestCache(len(points)) if len(starts) > 1 else None
    paths = _ServerPaths(n_clusters, weights) if len(starts) > 1 and rounds == "converge" \
        else None
    with _one_thread():
        for start in starts:
            first = np.flatnonzero(devices == start)
            init = points[farthest_point_seeding(points, first, n_clusters, cache=cache,
                                                 repeat=repeat)]
            result = server_rounds(points, init, rounds, weights, paths=paths)
            if result is None:  # it would end where an earlier start ended: not kept
                continue
            centers, labels, n_rounds = result
            spread = _server_spread(points, centers, labels, weights) if len(starts) > 1 \
                else 0.0
            if best is None or spread < best[0]:
                best = (spread, init, centers, labels, n_rounds, start)
    return best[1:]


class KFed(FederatedClusteringMixin):
    """k-FED one-shot federated k-means (Dennis, Li & Smith, ICML 2021).

    **When k-FED applies.** k-FED is built for *heterogeneous* federations: each device holds
    data of only a few of the ``k`` global clusters -- at most ``k'`` of them, the
    ``device_clusters`` parameter -- and the clusters are well separated (the paper's
    Definition 3.5; accuracy degrades as the separation drops, see its Fig 1). Each device
    clusters its own data into ``k^(z)`` clusters, once, and the server merges all local
    centers into ``k``. Choose ``k^(z)`` as the number of clusters device ``z`` actually holds
    (the paper assumes it known; the analysis needs ``k' <= sqrt(k)``); a partitioner can return
    it (``return_device_clusters=True``). On IID data (every device sees every cluster) k-FED
    with a small ``k'`` cannot work: each local center then averages several true clusters, and
    the server merges averages. There, keep ``device_clusters="auto"`` (``k`` local centers
    per device) or use a multi-round method (:class:`~fedclust.DistributedLloyd`,
    :class:`~fedclust.LocalKMeans`).

    Parameters
    ----------
    n_clusters : int, default=8
        ``k``, the number of clusters over the whole network.
    device_clusters : int, array-like of int or "auto", default="auto"
        ``k^(z)``, the number of clusters each device finds locally: one value for every
        device (``k'``) or one per device, in the order of ``np.unique(devices)``. At most
        ``n_clusters``. The paper's ``k'`` is the number of clusters a device holds: give it
        when it is known (the analysis needs ``k' <= sqrt(k)``). ``"auto"`` (not in the
        paper): every device finds ``k`` clusters, as many as any device can hold, so that
        no device merges clusters it holds (a device that holds fewer splits them, which
        costs floats, not quality), and the server clusters the local centers by weighted
        k-means (:func:`kmeans_server`: greedy k-means++, 10 restarts) in place of Algorithm
        2's farthest-point seeding, whose ``M`` would be one device's ``k`` centers. See the
        Notes.
    server_lloyd_rounds : int or "converge", default="converge"
        Lloyd rounds the server runs on the local centers after farthest-point seeding.
        Algorithm 2 runs exactly one (``1``); ``"converge"`` runs to a fixed point (the authors'
        code).
    server_starts : int or "all", default=32
        (Not with ``device_clusters="auto"``.) Devices whose local centers the server tries as
        the start of its seeding (Algorithm 2,
        step 2: "pick any z"); it keeps the clustering of the local centers with the smallest
        total distance from each local center to its global center (see docs/algorithms.md,
        *k-FED*). ``1``: one participating device drawn at random, as printed; ``n``: ``n``
        of the participating devices that sent centers, drawn at random (all of them, in
        device order, when there are at most ``n``); ``"all"``: every one.
    server_weighting : {"uniform", "size"}, default="size"
        ``"size"`` (not in the paper) weights each local center by its number of points
        (devices then also send the sizes): the server's Lloyd rounds then minimize the
        k-means cost of the rows the local centers stand for; ``"uniform"`` clusters the set
        of local centers as in Algorithm 2.
    local_means : {"projected", "original"}, default="projected"
        Lloyd's starting centers in Algorithm 1, step 3: the means of ``S_r`` projected on the
        top-``k^(z)`` singular subspace (the authors' code) or of the original points (the
        text's ``mu(S_r)``); see docs/algorithms.md, *k-FED*.
    local_max_iter : int, default=300
        Lloyd update steps at most on each device (Algorithm 1 runs to convergence).
    proximity_ratio : float, default=3.0
        Factor of the proximity filter in Algorithm 1 (3 in Awasthi & Sheffet).
    local_projection : bool, default=True
        Project each device's data on its top-``k^(z)`` singular subspace (Algorithm 1, step 1).
    refine_max_iter : int, default=300
        Lloyd rounds at most over the whole federation after the one-shot exchange (not in
        the paper): from the server's global centers, each round the devices return their
        per-cluster sums and counts (:class:`~fedclust.DistributedLloyd`'s round), until
        ``tol`` holds. ``0``: none, k-FED's single round as published (what the pipeline
        runs). One-shot, the centers are never fitted to the rows themselves and land 2 to 6 %
        above the optimum on noisy local clusters (``benchmarks/results/defaults.md``).
    tol : float, default=1e-4
        The refinement stops when an update moves the centers by at most ``tol`` times the
        mean feature variance in all (scikit-learn's ``KMeans`` test; ``d + 2`` floats up
        from every device once, kind ``data_moments``) or no label changes; ``0``: only the
        latter. Unused with ``refine_max_iter=0``.
    participation : float, default=1.0
        Fraction of devices whose local centers reach the server: ``max(floor(p Z), 1)`` of
        the ``Z`` devices (:func:`fedclust.rounds.sample_participants`); the others fail before
        sending, and their points are clustered afterwards like a new device's (Theorem 3.2).
    random_state : int, Generator or None, default=None
        Drives every random choice: the participating devices, the first device of the
        server's seeding and each device's SVD and k-means++.

    Notes
    -----
    The defaults serve a user who has not read the paper: ``device_clusters="auto"`` with a
    size-weighted k-means server comes within a few percent of ``KMeans()``'s cost on IID and
    label-skewed devices alike, at the price of ``k`` local centers per device, and the
    Lloyd refinement (``refine_max_iter``) then takes it to ``KMeans()``'s fixed points
    (``benchmarks/results/defaults.md``), at the price of its rounds. k-FED as published
    is one round: Algorithm 2 as printed is ``KFed(k, k', server_starts=1,
    server_lloyd_rounds=1, server_weighting="uniform", refine_max_iter=0)``; the pipeline
    passes the paper's settings explicitly. A
    restart (``n_init``) would repeat the devices' work and upload; the server already
    restarts on the same local centers at no communication (``server_starts``, or the 10
    restarts of :func:`kmeans_server`).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
        With the refinement, the nearest center of every row. With ``refine_max_iter=0``,
        the induced clustering (Definition 3.3): each row takes the global cluster of its local
        cluster. This is k-FED's output and the documented exception to
        ``labels_ == predict(X)``: ``predict`` sends each row to its nearest global center,
        which differs for a row whose local cluster was merged into another global cluster
        than the row's nearest one (on well-separated data the two agree).
    inertia_ : float
        (Weighted) k-means cost of the induced clustering with ``cluster_centers_``.
    n_iter_ : int
        Lloyd rounds run by the server (from the start it kept).
    n_iter_local_ : int
        Lloyd update steps until every device reached its local fixed point.
    n_iter_refine_ : int
        Lloyd updates of the refinement over the federation (0 without it).
    converged_ : bool
        Whether every device reached its local fixed point within ``local_max_iter``, with
        ``server_lloyd_rounds="converge"`` the server its fixed point (within 1,000 rounds),
        and the refinement ``tol`` within ``refine_max_iter``; a fit that did not warns
        (``ConvergenceWarning``).
    n_features_in_ : int
    device_clusters_ : ndarray of shape (n_devices,)
        ``k^(z)`` of every device.
    local_centers_ : ndarray of shape (n_local, n_features)
        Every non-empty local center of every device.
    local_center_devices_ : ndarray of shape (n_local,)
        Device id of each local center.
    local_center_sizes_ : ndarray of shape (n_local,)
    local_center_labels_ : ndarray of shape (n_local,)
        Global cluster of each local center (its set ``tau``, the server's clustering; the
        refinement keeps each global cluster's index).
    server_init_ : ndarray of shape (n_clusters, n_features)
        The server's farthest-point seeds ``M`` (Algorithm 2, steps 2-6) of the start it kept
        (``device_clusters="auto"``: the greedy k-means++ seeds of the restart it kept).
    server_start_device_ : int or None
        Id of the device whose local centers start ``server_init_`` (step 2); None with
        ``device_clusters="auto"``.
    participating_devices_ : ndarray
        Ids of the devices whose centers reached the server.
    device_ids_ : ndarray
        Ids of all devices seen in ``fit``.
    communication_ : Communication
        One round ("one outgoing message to send the local clustering results and one
        incoming message to receive cluster identity information", Sec. 3.2): every
        participating device sends its ``k^(z)`` local centers (``k^(z) d`` floats, kind
        ``local_centers``; with ``server_weighting="size"`` also ``k^(z)`` sizes) and receives
        the cluster identity of each (``k^(z)`` integers, kind ``cluster_ids``). A failed
        device is clustered afterwards the same way (kinds ``late_local_centers`` and
        ``late_cluster_ids``, outside the round). ``devices_participating`` is noted. The
        refinement adds :class:`~fedclust.DistributedLloyd`'s rounds and kinds (``centers``,
        ``cluster_sums``, ``cluster_counts``, ``data_moments``); ``refine_rounds`` is noted.

    Raises
    ------
    InfeasibleSettingError
        From ``fit``, when the participating devices send fewer (distinct) local centers than
        ``n_clusters``: the message says which limit binds.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import KFed
    >>> rng = np.random.default_rng(0)
    >>> centers = 20 * np.eye(4, 5)
    >>> labels = np.repeat(np.arange(4), 50)
    >>> X = centers[labels] + rng.standard_normal((200, 5))
    >>> devices = 2 * (labels // 2) + np.arange(200) % 2  # each device sees 2 clusters
    >>> km = KFed(n_clusters=4, device_clusters=2, refine_max_iter=0,
    ...           random_state=0).fit(X, devices=devices)
    >>> km.communication_["rounds"], km.communication_["ints_down"]  # 4 devices x 2 ids
    (1, 8)
    """

    _labels_are_nearest_center = False

    _parameter_constraints: dict = {
        **FederatedClusteringMixin._parameter_constraints,
        "device_clusters": [StrOptions({"auto"}), POSITIVE_INT, "array-like"],
        "server_lloyd_rounds": [StrOptions({"converge"}), POSITIVE_INT],
        "server_starts": [StrOptions({"all"}), POSITIVE_INT],
        "server_weighting": [StrOptions({"uniform", "size"})],
        "local_means": [StrOptions({"projected", "original"})],
        "local_max_iter": [POSITIVE_INT],
        "proximity_ratio": [Interval(numbers.Real, 1, None, closed="left")],
        "local_projection": ["boolean"],
        "refine_max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [TOL],
        "participation": [Interval(numbers.Real, 0, 1, closed="right")],
    }

    def __init__(self, n_clusters=8, device_clusters="auto", *, server_lloyd_rounds="converge",
                 server_starts=32, server_weighting="size", local_means="projected",
                 local_max_iter=300, proximity_ratio=3.0, local_projection=True,
                 refine_max_iter=300, tol=1e-4, participation=1.0, random_state=None):
        self.n_clusters = n_clusters
        self.device_clusters = device_clusters
        self.server_lloyd_rounds = server_lloyd_rounds
        self.server_starts = server_starts
        self.server_weighting = server_weighting
        self.local_means = local_means
        self.local_max_iter = local_max_iter
        self.proximity_ratio = proximity_ratio
        self.local_projection = local_projection
        self.refine_max_iter = refine_max_iter
        self.tol = tol
        self.participation = participation
        self.random_state = random_state

    def _check_params(self):
        # k' <= k (Algorithm 1 runs k' <= k local clusters): a relation the constraints
        # cannot state
        if isinstance(self.device_clusters, str):
            return
        largest = np.max(self.device_clusters)
        if largest > self.n_clusters:
            per_device = "" if isinstance(self.device_clusters, numbers.Integral) \
                else " on every device"
            raise ValueError(f"device_clusters must be <= n_clusters={self.n_clusters}"
                             f"{per_device}; got {largest}")
        if np.min(self.device_clusters) < 1:
            raise ValueError(f"device_clusters must be >= 1 on every device; got "
                             f"{np.min(self.device_clusters)}")

    def _local_clustering(self, federation, rng, device_clusters):
        return awasthi_sheffet(federation, device_clusters, random_state=rng,
                               proximity_ratio=self.proximity_ratio,
                               projection=bool(self.local_projection),
                               local_means=self.local_means, max_iter=self.local_max_iter)

    def _check_enough_centers(self, per_device, n_sent, participating):
        """Raise :class:`InfeasibleSettingError` naming what limits the local centers sent."""
        k, Z = self.n_clusters, len(per_device)
        if n_sent >= k:
            return
        if per_device.sum() < k:
            kp = int(per_device.max())
            why = (f"the {Z} devices can send at most {Z} x k'={kp} = {int(per_device.sum())} "
                   f"local centers: raise device_clusters to at least {-(-k // Z)} or use "
                   f"more devices")
        elif participating.sum() < Z:
            why = (f"only {int(participating.sum())} of the {Z} devices participate "
                   f"(participation={self.participation:g}) and they sent {n_sent}: raise "
                   f"participation")
        else:
            why = (f"the devices hold too few points for k'={int(per_device.max())} clusters "
                   f"each (a device with at most k' points sends each of its points)")
        raise InfeasibleSettingError(
            f"k-FED needs at least n_clusters={k} local centers at the server, but "
            f"{n_sent} were sent: {why}")

    def device_clusters_for(self, n_devices: int) -> np.ndarray:
        """``k^(z)``, the local clusters of each of ``n_devices`` devices (step API: the
        server tells every device its own; ``"auto"``: ``k`` on every device).

        Returns
        -------
        ndarray of shape (n_devices,)
        """
        k = self.n_clusters
        return _device_clusters(k if self._auto else self.device_clusters, n_devices)

    @property
    def _auto(self) -> bool:
        return isinstance(self.device_clusters, str)

    def server_step(self, centers, sizes, device_of_center, participating, per_device, rng,
                    *, few_distinct=False):
        """Algorithm 2 on the local centers that reached the server (step API: ``fit`` and a
        deployment's server, :mod:`fedclust.runtime.flower`, both run it); with
        ``device_clusters="auto"``, weighted k-means of them (:func:`kmeans_server`).

        Steps 2-6 (the k' centers of a start device, then farthest points) and step 7 (Lloyd
        rounds from ``M``) from every start, and the global cluster of every local center
        (Definition 3.3's map; a local center that did not reach the server takes its
        nearest global center, as a new device would, Theorem 3.2).

        Parameters
        ----------
        centers : ndarray of shape (n_local, n_features)
            Every device's local centers (Algorithm 1), device after device.
        sizes : ndarray of shape (n_local,)
            Their cluster sizes (weights with ``server_weighting="size"``, else unused).
        device_of_center : ndarray of shape (n_local,)
            The position of the device each came from.
        participating : ndarray of shape (n_devices,) of bool
            The devices whose centers reached the server.
        per_device : ndarray of shape (n_devices,)
            ``k^(z)`` of every device (:meth:`device_clusters_for`).
        rng : numpy.random.Generator
            The fit's generator after the devices' draws.
        few_distinct : bool, default=False
            Fewer distinct points than clusters (warned by ``fit``): seeds may repeat.

        Returns
        -------
        init, global_centers, center_labels, n_rounds, start
            The kept start's seeds ``M``, the global centers (float64), the global cluster of
            every local center, the server's Lloyd rounds and the kept start (a device
            position).
        """
        k = self.n_clusters
        sent = participating[device_of_center]
        # fewer distinct points than clusters (warned): the server repeats its seeds
        if not (few_distinct and sent.any()):
            self._check_enough_centers(per_device, int(sent.sum()), participating)
        server_centers = centers[sent]
        server_devices = device_of_center[sent]
        weights = sizes[sent].astype(np.float64) if self.server_weighting == "size" else None
        if self._auto:
            init, global_centers, tau, n_rounds = kmeans_server(
                server_centers, k, self.server_lloyd_rounds, weights, rng)
            return init, global_centers, self._labels_of(centers, sent, tau, global_centers), \
                n_rounds, None
        if self.server_starts == 1:
            starts = [rng.choice(np.flatnonzero(participating))]  # as printed: any one device
        else:
            starts = np.unique(server_devices)  # participating devices that sent centers
            if self.server_starts != "all" and self.server_starts < len(starts):
                starts = rng.choice(starts, size=self.server_starts, replace=False)
        init, global_centers, tau, n_rounds, start = server_clustering(
            server_centers, server_devices, starts, k, self.server_lloyd_rounds, weights,
            repeat=few_distinct)
        return init, global_centers, self._labels_of(centers, sent, tau, global_centers), \
            n_rounds, start

    @staticmethod
    def _labels_of(centers, sent, tau, global_centers):
        """The global cluster of every local center: its set for those the server clustered,
        the nearest global center for the others (as a new device's, Theorem 3.2)."""
        center_labels = np.empty(len(centers), dtype=np.int64)
        center_labels[sent] = tau
        if (~sent).any():
            center_labels[~sent] = assign(centers[~sent],
                                          global_centers.astype(centers.dtype, copy=False))[0]
        return center_labels

    def _fit(self, federation, rng, comm, callback):
        Z = federation.n_devices
        per_device = self.device_clusters_for(Z)
        participating = np.zeros(Z, dtype=bool)
        participating[sample_participants(Z, self.participation, rng)] = True

        # Algorithm 1 on every device (a device that fails still clusters its data locally)
        local = self._local_clustering(federation, rng, per_device)
        device_of_center, slot = np.nonzero(local.valid)
        centers = local.centers[device_of_center, slot]
        sizes = local.sizes[device_of_center, slot]

        # Algorithm 2 on the local centers that reached the server
        init, global_centers, center_labels, n_rounds, start = self.server_step(
            centers, sizes, device_of_center, participating, per_device, rng,
            few_distinct=getattr(self, "_few_distinct_points", False))
        self.server_init_ = init
        self.server_start_device_ = None if start is None else federation.device_ids[start]
        self.cluster_centers_ = global_centers.astype(federation.X.dtype, copy=False)
        self.n_iter_ = n_rounds

        # induced clustering (Definition 3.3)
        global_of_local = np.full(local.valid.shape, -1, dtype=np.int64)
        global_of_local[device_of_center, slot] = center_labels
        induced = global_of_local[federation.device_of_row, local.labels]
        unplaced = induced < 0
        if unplaced.any():
            # a device whose rows all have zero weight forms no local cluster (Algorithm 1 on
            # weighted points); its rows take the nearest global center, as predict would
            induced[unplaced] = assign(federation.X[unplaced], self.cluster_centers_)[0]
        self.labels_ = federation.to_original_order(induced)
        refined = self._refine_by_lloyd(federation, comm, self.refine_max_iter)

        self.device_clusters_ = per_device
        self.local_centers_ = centers
        self.local_center_devices_ = federation.device_ids[device_of_center]
        self.local_center_sizes_ = sizes
        self.local_center_labels_ = center_labels
        self.participating_devices_ = federation.device_ids[participating]
        self.device_ids_ = federation.device_ids
        self.n_iter_local_ = local.n_iter
        server_done = self.server_lloyd_rounds != "converge" or n_rounds < _MAX_SERVER_ROUNDS
        self.converged_ = bool(local.converged and server_done and refined)
        if not local.converged:
            warn_not_converged(self, "local_max_iter", self.local_max_iter)
        elif not server_done:
            warn_not_converged(self, "its round limit", _MAX_SERVER_ROUNDS, "KFed's server")
        elif not refined:
            warn_not_converged(self, "refine_max_iter", self.refine_max_iter,
                               "KFed's refinement")
        self._record_communication(comm, federation.n_features, federation.weights is not None,
                                   device_of_center, participating)

    def _record_communication(self, comm, n_features, weighted, device_of_center,
                              participating):
        """One round: local centers (and sizes) up, one cluster identity per center down;
        failed devices the same, later."""
        Z, d = len(participating), n_features
        per_device = np.bincount(device_of_center, minlength=Z)
        for prefix, who in (("", participating), ("late_", ~participating)):
            talkers = np.flatnonzero(who)
            if not len(talkers):
                continue
            comm.send(f"{prefix}local_centers", talkers, SERVER, floats=per_device[talkers] * d)
            if self.server_weighting == "size":
                size_kind = {"floats": per_device[talkers]} if weighted else \
                    {"ints": per_device[talkers]}
                comm.send(f"{prefix}local_sizes", talkers, SERVER, **size_kind)
            comm.send(f"{prefix}cluster_ids", SERVER, talkers, ints=per_device[talkers])
        comm.add_rounds(1)
        comm.note("devices_participating", int(participating.sum()))

    def _get_metadata_request(self):
        """The routing requests, ``predict``'s ``devices`` following ``fit``'s until set.

        ``fit_predict`` returns the fit's ``labels_``, but scikit-learn composes its request
        from ``fit``'s and ``predict``'s, which both take ``devices``: without this, a routed
        ``Pipeline.fit_predict`` after ``set_fit_request(devices=True)`` alone is refused as
        a conflict. An explicit ``set_predict_request`` is kept."""
        requests = super()._get_metadata_request()
        fit_value = requests.fit.requests.get("devices")
        if requests.predict.requests.get("devices") is None and fit_value is not None:
            requests.predict.add_request(param="devices", alias=fit_value)
        return requests

    def predict(self, X, devices=None):
        """Cluster new data with the fitted global centers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        devices : array-like of int, shape (n_samples,), optional
            Without ``devices`` each row goes to its nearest global center. With ``devices``
            each new device first runs Algorithm 1 on its own rows (with the fitted ``k'``, the
            largest ``k^(z)``) and every row takes the global cluster nearest to its local
            center -- the route of Theorem 3.2, which needs no new round of communication
            beyond downloading the cluster identities.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        if devices is None:
            return super().predict(X)
        return self._join(X, devices)[0]

    def _join(self, X, devices, sample_weight=None):
        """Theorem 3.2's route for new devices: each runs Algorithm 1 on its own rows (with the
        fitted ``k'``, the largest ``k^(z)``), each local center takes the nearest global
        center, each row its local center's. Returns the rows' clusters (input order), the
        federation, the local clustering and the global cluster of every local center."""
        check_is_fitted(self, "cluster_centers_")
        X = self._check_test_data(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        federation = Federation.from_devices(X, check_devices(devices, X.shape[0]),
                                             sample_weight=sample_weight)
        k_prime = int(np.max(self.device_clusters_))
        local = self._local_clustering(federation, fit_rng(self.random_state), k_prime)
        global_of_local = assign(local.centers.reshape(-1, X.shape[1]),
                                 self.cluster_centers_)[0].reshape(local.valid.shape)
        induced = global_of_local[federation.device_of_row, local.labels]
        return federation.to_original_order(induced), federation, local, global_of_local

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, *, devices=None, sample_weight=None):
        """New devices join the fitted model (Theorem 3.2): no new server round, the global
        centers stay; each new device clusters its rows (Algorithm 1, the fitted ``k'``),
        sends its local centers and receives their global clusters (kinds
        ``late_local_centers`` and ``late_cluster_ids``, booked as a failed device's are).
        Unfitted, it is :meth:`fit`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The new devices' rows.
        y : Ignored
        devices : array-like of int, shape (n_samples,), default=None
            The new device of each row; ids not among ``device_ids_`` (a device that already
            joined cannot join again). None: one new device, the next unused id.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
            ``labels_`` and ``inertia_`` are those of the new rows (as scikit-learn's
            ``MiniBatchKMeans.partial_fit`` keeps its last batch's); the local centers,
            their devices, sizes and global clusters, ``device_ids_`` and
            ``device_clusters_`` grow by the new devices'.
        """
        if not hasattr(self, "cluster_centers_"):
            return self.fit(X, devices=devices, sample_weight=sample_weight)
        if devices is None:  # one new device, named after the fitted ones
            fresh = int(np.max(self.device_ids_)) + 1 if self.device_ids_.dtype.kind in "iu" \
                else f"device{len(self.device_ids_)}"
            devices = np.full(len(X), fresh, dtype=self.device_ids_.dtype
                              if self.device_ids_.dtype.kind in "iu" else object)
        devices = check_devices(devices, len(X))
        if (devices.dtype.kind in "iu") != (self.device_ids_.dtype.kind in "iu"):
            raise ValueError(f"the new devices' ids must be of the fitted ones' kind (integers "
                             f"or strings); fitted: {self.device_ids_[:3].tolist()}...")
        joined = np.intersect1d(np.unique(devices), self.device_ids_)
        if len(joined):
            raise ValueError(f"devices {joined[:5].tolist()} already joined this model: "
                             f"partial_fit adds new devices (Theorem 3.2)")
        labels, federation, local, global_of_local = self._join(X, devices, sample_weight)
        device_of_center, slot = np.nonzero(local.valid)
        centers = local.centers[device_of_center, slot]
        per_device = np.bincount(device_of_center, minlength=federation.n_devices)
        talkers = np.flatnonzero(per_device)
        d = federation.n_features
        # in the ledger a device is its position in device_ids_, as in fit: the new ones
        # follow the fitted ones
        nodes = len(self.device_ids_) + talkers
        self.communication_.send("late_local_centers", nodes, SERVER,
                                 floats=per_device[talkers] * d)
        self.communication_.send("late_cluster_ids", SERVER, nodes, ints=per_device[talkers])
        self.local_centers_ = np.concatenate([self.local_centers_, centers])
        self.local_center_devices_ = np.concatenate(
            [self.local_center_devices_, federation.device_ids[device_of_center]])
        self.local_center_sizes_ = np.concatenate(
            [self.local_center_sizes_, local.sizes[device_of_center, slot]])
        self.local_center_labels_ = np.concatenate(
            [self.local_center_labels_, global_of_local[device_of_center, slot]])
        self.device_ids_ = np.concatenate([self.device_ids_, federation.device_ids])
        self.device_clusters_ = np.concatenate(
            [self.device_clusters_, np.full(federation.n_devices, np.max(self.device_clusters_))])
        self.labels_ = labels
        self.inertia_ = self._cost(federation.X, self.cluster_centers_,
                                   labels[federation.order], federation.weights)
        return self

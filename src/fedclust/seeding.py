"""k-means++ seeding, weighted, centralized and over a federation, with what it costs to send.

:func:`kmeans_plusplus` is k-means++ (Arthur & Vassilvitskii, 2007) on pooled weighted points;
:func:`distributed_kmeans_plusplus` draws from the same distribution without moving data (the
LocalKMeans++ initialization, Vardhan et al. 2025, Algorithm 2); and
:func:`distributed_greedy_kmeans_plusplus` is scikit-learn's greedy variant over the
federation. Their distributions, what each sends, how weights enter and the k-median seeding
(``power=1``): ``docs/algorithms.md`` (Seeding).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._jit import njit, prange
from ._validation import check_choice, check_random_state, check_sample_weight
from .communication import SERVER, Communication
from .federation import Federation
from .lloyd import _FASTMATH, squared_norms

__all__ = ["kmeans_plusplus", "kmeans_plusplus_by_device", "distributed_kmeans_plusplus",
           "distributed_greedy_kmeans_plusplus", "distributed_random_init", "greedy_trials",
           "greedy_uniforms", "initial_centers", "SEEDINGS"]


def _positive(weights, n: int) -> np.ndarray | None:
    """``max(w, 0)``, or None for unweighted rows."""
    return None if weights is None else np.maximum(np.asarray(weights, dtype=np.float64), 0.0)


def _check_enough(n_clusters: int, n_drawable: int, what: str) -> None:
    """Seeding needs a row to draw; with fewer drawable rows than ``n_clusters`` the later
    draws repeat rows (duplicate centers), as with fewer distinct points, which the
    estimators announce (a ``ConvergenceWarning``, as scikit-learn's ``KMeans``)."""
    if n_clusters > 0 and n_drawable < 1:
        raise ValueError(f"n_clusters={n_clusters}: there are no {what} that seeding can "
                         f"draw from")


def _sq_dist_to(X, x_sq, row) -> np.ndarray:
    return np.maximum(x_sq - 2.0 * (X @ X[row]) + x_sq[row], 0.0)


def _check_power(power) -> int:
    """``power`` as 1 (``D`` sampling, k-median) or 2 (``D^2``, k-means)."""
    if isinstance(power, bool) or not isinstance(power, numbers.Real) or power not in (1, 2):
        raise ValueError(f"power must be 1 (D sampling, k-median) or 2 (D^2 sampling, "
                         f"k-means); got {power!r}")
    return int(power)


def kmeans_plusplus(X, n_clusters: int, *, sample_weight=None, random_state=None,
                    x_sq: np.ndarray | None = None, power: int = 2):
    """Weighted k-means++ seeding on pooled data (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_clusters : int
    sample_weight : array-like of shape (n,), optional
        Row weights; negative weights are accepted and never drawn.
    random_state : int, Generator or None
    x_sq : ndarray of shape (n,), optional
        Precomputed squared norms of the rows.
    power : {1, 2}, default=2
        Every next center is drawn proportional to ``w D^power``: 2 is k-means++, 1 the
        k-median seeding (``D`` sampling).

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    rows : ndarray of shape (n_clusters,)
        Indices of the chosen rows.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.seeding import kmeans_plusplus
    >>> X = np.array([[0.0], [0.1], [10.0], [10.1]])
    >>> centers, rows = kmeans_plusplus(X, 2, random_state=0)
    >>> sorted(np.round(centers.ravel()).tolist())  # one point from each pair
    [0.0, 10.0]
    """
    power = _check_power(power)
    X = np.asarray(X)
    n = X.shape[0]
    w = _positive(check_sample_weight(sample_weight, n, allow_negative=True), n)
    _check_enough(n_clusters, n if w is None else int((w > 0).sum()),
                  "rows" if w is None else "rows of positive weight")
    rng = check_random_state(random_state)
    if x_sq is None:
        x_sq = squared_norms(X)
    rows = np.empty(n_clusters, dtype=np.int64)
    rows[0] = rng.integers(n) if w is None else rng.choice(n, p=w / w.sum())
    d2 = _sq_dist_to(X, x_sq, rows[0])
    for j in range(1, n_clusters):
        D = d2 if power == 2 else np.sqrt(d2)  # D^power
        p = D if w is None else w * D
        total = p.sum()
        if total <= 0.0:
            # every drawable row coincides with a chosen center: draw as for the first one
            rows[j] = rng.integers(n) if w is None else rng.choice(n, p=w / w.sum())
        else:
            rows[j] = rng.choice(n, p=p / total)
        d2 = np.minimum(d2, _sq_dist_to(X, x_sq, rows[j]))
    return X[rows].copy(), rows


@njit(cache=True)
def _draw(cumulative, u):  # pragma: no cover (compiled)
    """Index drawn with probability proportional to the increments of ``cumulative``, for
    ``u`` in ``(0, 1]``: the first index whose cumulative mass reaches ``u`` times the total,
    so a row of zero mass (leading, inner or trailing) is never drawn."""
    i = np.searchsorted(cumulative, u * cumulative[-1], side="left")
    return min(i, len(cumulative) - 1)


# rows per block of the candidates' dot products (their partial sums stay in L1 cache)
_SEED_BLOCK = 256


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _greedy_kmeanspp_kernel(X, w, offsets, n_clusters, n_trials, uniforms, power,
                            rows):  # pragma: no cover (compiled; tested through its wrapper)
    """``power`` 2 draws and scores by ``w D^2``, 1 by ``w D``; ``closest`` and
    ``trial_d2`` hold squared distances either way. The ``power == 2`` branches are the
    k-means++ loops as they were: k-median's square roots cost k-means nothing."""
    d = X.shape[1]
    for z in prange(len(offsets) - 1):
        s, e, k = offsets[z], offsets[z + 1], n_clusters[z]
        if k == 0 or e == s:
            continue
        wz = w[s:e]
        n = e - s
        # the device's rows feature-major, in the data's dtype: the distance loops below run
        # along the rows, contiguous and vectorized, for every candidate. Every product is
        # taken in float64 (exact for float32 factors), so float32 rows give the numbers a
        # float64 copy gave, from half the bytes streamed per candidate step
        At = np.empty((d, n), dtype=X.dtype)
        for i in range(n):
            for f in range(d):
                At[f, i] = X[s + i, f]
        x_sq = np.zeros(n)
        for f in range(d):
            for i in range(n):
                x_sq[i] += np.float64(At[f, i]) * np.float64(At[f, i])
        first = _draw(np.cumsum(wz), uniforms[z, 0, 0])
        rows[z, 0] = s + first
        # squared distances in the GEMM form (as scikit-learn's kmeans_plusplus), clipped at 0
        closest = np.empty(n)
        for i in range(n):
            dot = 0.0
            for f in range(d):
                dot += np.float64(At[f, i]) * np.float64(At[f, first])
            closest[i] = max(x_sq[i] + x_sq[first] - 2.0 * dot, 0.0)
        closest[first] = 0.0  # exactly, whatever the GEMM form rounds to: never drawn again
        trials = n_trials[z]
        cand = np.empty(trials, dtype=np.int64)
        pots = np.empty(trials)
        trial_d2 = np.empty((trials, n))
        for c in range(1, k):
            # the candidates of this step, all drawn from the same D^power distribution
            if power == 2:
                cumulative = np.cumsum(wz * closest)
            else:
                cumulative = np.cumsum(wz * np.sqrt(closest))
            if cumulative[-1] <= 0.0:  # every drawable row coincides with a chosen center
                cumulative = np.cumsum(wz)
            for t in range(trials):
                cand[t] = _draw(cumulative, uniforms[z, c, t])
            # every candidate's dot products (then its distances) in trial_d2, all candidates at
            # once block by block of rows (each sum still runs over the features in order, as
            # with one candidate at a time over all rows: the same numbers)
            trial_d2[:trials] = 0.0
            for lo in range(0, n, _SEED_BLOCK):  # a block of rows stays in L1 over the features
                hi = min(lo + _SEED_BLOCK, n)
                for f in range(d):
                    row = At[f, lo:hi]
                    for t in range(trials):
                        b = np.float64(At[f, cand[t]])
                        dots = trial_d2[t, lo:hi]
                        for i in range(hi - lo):
                            dots[i] += np.float64(row[i]) * b
            for t in range(trials):
                dots = trial_d2[t]
                pot = 0.0
                if power == 2:  # the potential sum w D^2
                    for i in range(n):
                        dist = min(closest[i],
                                   max(x_sq[i] + x_sq[cand[t]] - 2.0 * dots[i], 0.0))
                        trial_d2[t, i] = dist
                        pot += wz[i] * dist
                else:  # sum w D
                    for i in range(n):
                        dist = min(closest[i],
                                   max(x_sq[i] + x_sq[cand[t]] - 2.0 * dots[i], 0.0))
                        trial_d2[t, i] = dist
                        pot += wz[i] * np.sqrt(dist)
                pots[t] = pot
            for t in range(trials):  # a candidate is exactly at distance 0 from itself
                own = trial_d2[t, cand[t]]
                pots[t] -= wz[cand[t]] * (own if power == 2 else np.sqrt(own))
                trial_d2[t, cand[t]] = 0.0
            best = np.argmin(pots)
            rows[z, c] = s + cand[best]
            closest[:] = trial_d2[best]


def _greedy_trials(n_clusters: np.ndarray) -> np.ndarray:
    """Candidates per draw of greedy k-means++ (scikit-learn's ``2 + floor(ln k)``)."""
    return 2 + np.floor(np.log(np.maximum(n_clusters, 1))).astype(np.int64)


def greedy_uniforms(n_clusters, random_state=None) -> np.ndarray:
    """The uniforms :func:`kmeans_plusplus_by_device` draws, drawn as it draws them: shape
    ``(n_devices, max(max(n_clusters), 1), max trials)``, in ``(0, 1]``. Row ``z`` is device
    ``z``'s; drawn apart, they let a device that holds only its own rows (a real deployment)
    seed as the whole federation's call would have."""
    n_clusters = np.asarray(n_clusters, dtype=np.int64).reshape(-1)
    Z = len(n_clusters)
    rng = check_random_state(random_state)
    k_max = int(n_clusters.max()) if Z else 0
    # 1 - U lies in (0, 1]: a draw never lands on a leading row of zero mass
    return 1.0 - rng.random((Z, max(k_max, 1), int(_greedy_trials(n_clusters).max())
                             if Z else 1))


def kmeans_plusplus_by_device(federation: Federation, n_clusters, *, weights=None,
                              points=None, random_state=None, power: int = 2,
                              uniforms: np.ndarray | None = None) -> np.ndarray:
    """Greedy k-means++ seeding run on every device on its own rows, all devices at once.

    Each device draws its first center with probability proportional to the row weight and
    every next one greedily, as scikit-learn's ``kmeans_plusplus`` does: ``2 + floor(ln k)``
    candidates drawn proportional to ``w D^2``, keeping the one that lowers the potential
    ``sum w D^2`` most (with ``power=1``: drawn proportional to ``w D``, scored by
    ``sum w D``, the k-median potential).
    This is the seeding of k-FED's Algorithm 1, step 2 (the authors' code calls scikit-learn's
    function on each device); here all devices run in parallel in one compiled call.

    Parameters
    ----------
    federation : Federation
    n_clusters : int or ndarray of shape (n_devices,)
        Centers to draw on each device (0 skips a device); at most its rows of positive weight.
    weights : ndarray of shape (n_samples,), optional
        Row weights (sorted-row order, default ``federation.weights``); rows of weight <= 0
        are never drawn.
    points : ndarray of shape (n_samples, p), optional
        Coordinates to seed in (default ``federation.X``), e.g. each device's rows projected on
        its own subspace.
    random_state : int, Generator or None
    power : {1, 2}, default=2
        The exponent of ``D`` in the draws and the potential: 2 k-means++, 1 k-median.
    uniforms : ndarray of shape (n_devices, >= max(n_clusters), >= trials), optional
        The draws (:func:`greedy_uniforms`) instead of new ones; ``random_state`` is unused.

    Returns
    -------
    rows : ndarray of shape (n_devices, max(n_clusters))
        Sorted-row index of every chosen center; -1 pads devices with fewer centers.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.federation import Federation
    >>> X = np.array([[0.0], [0.1], [10.0], [10.1], [5.0], [5.1]])
    >>> fed = Federation.from_devices(X, [0, 0, 0, 0, 1, 1])
    >>> rows = kmeans_plusplus_by_device(fed, np.array([2, 1]), random_state=0)
    >>> sorted(np.round(X[rows[0]].ravel()).tolist()), int(rows[1, 1])  # one from each pair
    ([0.0, 10.0], -1)
    """
    power = _check_power(power)
    Z = federation.n_devices
    n_clusters = np.broadcast_to(np.asarray(n_clusters, dtype=np.int64), (Z,)).copy()
    weights = federation.weights if weights is None else weights
    w = np.ones(federation.n_samples) if weights is None else np.maximum(weights, 0.0)
    drawable = np.bincount(federation.device_of_row, weights=w > 0, minlength=Z).astype(int)
    too_many = np.flatnonzero(n_clusters > drawable)
    if len(too_many):
        z = too_many[0]
        raise ValueError(f"n_clusters={n_clusters[z]} on device {federation.device_ids[z]} "
                         f"exceeds its {drawable[z]} rows of positive weight")
    n_trials = _greedy_trials(n_clusters)
    k_max = int(n_clusters.max()) if Z else 0
    if uniforms is None:
        uniforms = greedy_uniforms(n_clusters, random_state)
    elif uniforms.ndim != 3 or uniforms.shape[0] != Z or uniforms.shape[1] < k_max \
            or (Z and uniforms.shape[2] < n_trials.max()):
        raise ValueError(f"uniforms must have shape ({Z}, >= {k_max}, >= "
                         f"{int(n_trials.max()) if Z else 1}); got {uniforms.shape}")
    rows = np.full((Z, k_max), -1, dtype=np.int64)
    # float32 stays float32: the kernel reads it into float64 device by device
    X = np.asarray(federation.X if points is None else points)
    X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype == np.float32 else np.float64)
    _greedy_kmeanspp_kernel(X, w, federation.offsets, n_clusters, n_trials, uniforms, power,
                            rows)
    return rows


def _sample_point(federation: Federation, masses: np.ndarray, weights: np.ndarray,
                  rng: np.random.Generator) -> int:
    """Server picks a device proportionally to ``masses``; the device picks one of its rows
    proportionally to ``weights``. Returns the sorted-row index."""
    device = rng.choice(len(masses), p=masses / masses.sum())
    start, stop = federation.offsets[device], federation.offsets[device + 1]
    w = weights[start:stop]
    return int(start + rng.choice(stop - start, p=w / w.sum()))


def _drawing_weights(federation: Federation) -> np.ndarray:
    """``max(w, 0)`` of every row, ones for unweighted rows: the federated seedings draw
    unweighted rows exactly as rows of weight 1 (the same calls on the generator), so that
    ``sample_weight=None`` and ``sample_weight=np.ones(n)`` seed alike from the same seed."""
    if federation.weights is None:
        return np.ones(federation.n_samples)
    return _positive(federation.weights, federation.n_samples)


def _device_masses(federation: Federation, values: np.ndarray) -> np.ndarray:
    return np.add.reduceat(values, federation.offsets[:-1])


def distributed_random_init(federation: Federation, n_clusters: int,
                            rng: np.random.Generator, comm: Communication):
    """``n_clusters`` distinct rows drawn uniformly (with weights: proportionally to the
    weight, without replacement) from the whole federation.

    Protocol: the devices report their sizes (one round), then the server draws the centers and
    asks the owning devices for them (a second round, one point per center).

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    rows : ndarray of shape (n_clusters,)
        Indices of the chosen rows in the federation's sorted order.
    """
    n, d = federation.n_samples, federation.n_features
    w = _drawing_weights(federation)
    drawable = int((w > 0).sum())
    if n_clusters > drawable:  # distinct rows, by definition of this initialisation
        raise ValueError(f"n_clusters={n_clusters} exceeds the {drawable} rows of the "
                         f"federation that a random initialisation can draw (distinct rows "
                         f"of positive weight)")
    rows = rng.choice(n, size=n_clusters, replace=False, p=w / w.sum())
    owners, per_owner = np.unique(np.searchsorted(federation.offsets, rows, side="right") - 1,
                                  return_counts=True)
    _report_sizes(federation, comm)
    # the server asks each owner for its rows (their indices), and gets the points back
    comm.send("seed_request", SERVER, owners, ints=per_owner)
    comm.send("seed_point", owners, SERVER, floats=per_owner * d)
    comm.add_rounds(1)
    return federation.X[rows].copy(), rows


def _report_sizes(federation: Federation, comm: Communication) -> None:
    """One round: every device sends its size (an int; its total weight, a float, when rows
    are weighted)."""
    devices = np.arange(federation.n_devices)
    if federation.weights is None:
        comm.send("device_size", devices, SERVER, ints=1)
    else:
        comm.send("device_weight", devices, SERVER, floats=1)
    comm.add_rounds(1)


def distributed_kmeans_plusplus(federation: Federation, n_clusters: int,
                                rng: np.random.Generator, comm: Communication, *,
                                x_sq: np.ndarray | None = None):
    """Exact weighted k-means++ over a federation (see the module docstring).

    Communication, per center: one round in which the server broadcasts the previous center
    (``d`` floats to each device; nothing for the first) and gathers one ``w D^2`` mass per
    device (the device sizes for the first center), then one round with the chosen device,
    which sends its sampled point (``d`` floats).

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    rows : ndarray of shape (n_clusters,)
        Indices of the chosen rows in the federation's sorted order.
    """
    X = federation.X
    d, Z = federation.n_features, federation.n_devices
    devices = np.arange(Z)
    rows = np.empty(n_clusters, dtype=np.int64)
    w, x_sq, first_masses, rows[0], d2 = _first_center(federation, n_clusters, rng, comm, x_sq)
    for j in range(1, n_clusters):
        scores = w * d2
        masses = _device_masses(federation, scores)
        comm.send("seed_center", SERVER, devices, floats=d)
        comm.send("seed_mass", devices, SERVER, floats=1)
        comm.add_rounds(1)
        if masses.sum() <= 0.0:
            # every drawable point coincides with a chosen center: draw as for the first one
            rows[j] = _sample_point(federation, first_masses, w, rng)
        else:
            rows[j] = _sample_point(federation, masses, scores, rng)
        comm.send("seed_point", _owner(federation, rows[j]), SERVER, floats=d)
        comm.add_rounds(1)
        d2 = np.minimum(d2, _sq_dist_to(X, x_sq, rows[j]))
    return X[rows].copy(), rows


def _first_center(federation: Federation, n_clusters: int, rng: np.random.Generator,
                  comm: Communication, x_sq: np.ndarray | None):
    """The first center of the federated k-means++ seedings, drawn proportionally to the
    weight (a device by its size or weight, then one of its rows): the sizes reported (one
    round) and the point sent (one round). Returns the drawing weights, the squared norms,
    the first draw's device masses, the row and every row's squared distance to it."""
    w = _drawing_weights(federation)
    _check_enough(n_clusters, int((w > 0).sum()),
                  "rows" if federation.weights is None else "rows of positive weight")
    if x_sq is None:
        x_sq = squared_norms(federation.X)
    first_masses = _device_masses(federation, w)
    _report_sizes(federation, comm)
    row = _sample_point(federation, first_masses, w, rng)
    comm.send("seed_point", _owner(federation, row), SERVER, floats=federation.n_features)
    comm.add_rounds(1)
    return w, x_sq, first_masses, row, _sq_dist_to(federation.X, x_sq, row)


def greedy_trials(n_clusters: int) -> int:
    """Candidates per center of the greedy seeding: ``2 + floor(ln k)``, scikit-learn's."""
    return 2 + int(np.log(max(n_clusters, 1)))


def distributed_greedy_kmeans_plusplus(federation: Federation, n_clusters: int,
                                       rng: np.random.Generator, comm: Communication, *,
                                       n_local_trials: int | None = None,
                                       x_sq: np.ndarray | None = None):
    """Greedy weighted k-means++ over a federation: scikit-learn's seeding without moving data.

    The first center is drawn as in :func:`distributed_kmeans_plusplus`. For every next one
    the server draws ``n_local_trials`` candidates (default :func:`greedy_trials`) from the
    ``w D^2`` distribution (a device by its mass, then one of its rows), every device returns
    the potential ``sum w min(D^2, D_c^2)`` of its rows for every candidate ``c``, and the
    server keeps the candidate of the lowest total (the first drawn on a tie): the greedy
    k-means++ of scikit-learn's ``kmeans_plusplus`` on the pooled rows. The winner's
    per-device potentials are the next draw's masses.

    Communication: the sizes (one round), the first point (one round), the first center down
    with one mass up per device (one round); then per further center one round in which the
    candidates' owners send them (``d`` floats each; from the second on with the previous
    winner's index, one integer, to every device) and one in which the server sends the
    candidates to every device (``L d`` floats) and gathers ``L`` potentials from each:
    ``2 k + 1`` rounds in all.

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    rows : ndarray of shape (n_clusters,)
        Indices of the chosen rows in the federation's sorted order.
    """
    X = federation.X
    d, Z = federation.n_features, federation.n_devices
    trials = greedy_trials(n_clusters) if n_local_trials is None else int(n_local_trials)
    if trials < 1:
        raise ValueError(f"n_local_trials must be >= 1; got {n_local_trials!r}")
    devices = np.arange(Z)
    rows = np.empty(n_clusters, dtype=np.int64)
    w, x_sq, first_masses, rows[0], d2 = _first_center(federation, n_clusters, rng, comm, x_sq)
    if n_clusters > 1:
        comm.send("seed_center", SERVER, devices, floats=d)
        comm.send("seed_mass", devices, SERVER, floats=1)
        comm.add_rounds(1)
    masses = _device_masses(federation, w * d2)
    for j in range(1, n_clusters):
        scores = w * d2
        if masses.sum() <= 0.0:
            # every drawable point coincides with a chosen center: draw as for the first one
            candidates = [_sample_point(federation, first_masses, w, rng) for _ in range(trials)]
        else:
            candidates = [_sample_point(federation, masses, scores, rng) for _ in range(trials)]
        owners, per_owner = np.unique([_owner(federation, r) for r in candidates],
                                      return_counts=True)
        if j > 1:
            comm.send("seed_choice", SERVER, devices, ints=1)
        comm.send("seed_point", owners, SERVER, floats=per_owner * d)
        comm.add_rounds(1)
        comm.send("seed_candidates", SERVER, devices, floats=trials * d)
        comm.send("seed_potential", devices, SERVER, floats=trials)
        comm.add_rounds(1)
        best, best_d2, best_masses = None, None, None
        for row in candidates:
            trial = np.minimum(d2, _sq_dist_to(X, x_sq, row))
            trial[row] = 0.0  # a candidate is at distance 0 from itself, whatever the rounding
            trial_masses = _device_masses(federation, w * trial)
            if best is None or trial_masses.sum() < best_masses.sum():
                best, best_d2, best_masses = row, trial, trial_masses
        rows[j], d2, masses = best, best_d2, best_masses
    return X[rows].copy(), rows


def _owner(federation: Federation, row) -> int:
    return int(np.searchsorted(federation.offsets, row, side="right") - 1)


#: The seedings :func:`initial_centers` resolves by name.
SEEDINGS = {"k-means++": distributed_kmeans_plusplus,
            "greedy-k-means++": distributed_greedy_kmeans_plusplus,
            "random": distributed_random_init}


def initial_centers(init, federation: Federation, n_clusters: int, rng: np.random.Generator,
                    comm: Communication) -> np.ndarray:
    """The ``init`` parameter of the server-based estimators, resolved.

    ``"k-means++"`` runs :func:`distributed_kmeans_plusplus`, ``"greedy-k-means++"``
    :func:`distributed_greedy_kmeans_plusplus`, ``"random"`` :func:`distributed_random_init`
    (each records its messages in ``comm``); an array of shape ``(n_clusters, n_features)``
    is used as given, at no communication cost.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    """
    if isinstance(init, str):
        check_choice(init, "init", set(SEEDINGS))
        centers, _ = SEEDINGS[init](federation, n_clusters, rng, comm)
        return centers
    centers = np.asarray(init, dtype=federation.X.dtype)
    shape = (n_clusters, federation.n_features)
    if centers.shape != shape:
        raise ValueError(f"init array must have shape {shape}; got {centers.shape}")
    if not np.isfinite(centers).all():
        raise ValueError("init array contains NaN or infinite values")
    return centers.copy()

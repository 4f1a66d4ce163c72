"""The one Lloyd / assignment kernel that every algorithm shares.

One compiled pass (numba), parallel over blocks of rows, assigns every row to the nearest of
its center set's centers (one set, or one per device of a
:class:`~fedclust.federation.Federation`: all devices in one call) and, in a Lloyd pass, sums
every cluster's weighted rows while the block is in cache; nothing of size ``n x k`` is
materialized. k-means and k-median (Weiszfeld's update) share it, weighted or not, the
weights possibly negative (a distributed coreset's).

How the pass is laid out, k-median's update and the conventions every algorithm inherits
(empty clusters, weights, negative weights, ties, stopping): docs/algorithms.md, *The Lloyd
kernel*.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass

import numba
import numpy as np
import threadpoolctl
from scipy.spatial.distance import cdist
from threadpoolctl import LibController, ThreadpoolController

from ._jit import njit, prange
from ._validation import check_choice
from .federation import Federation

__all__ = [
    "squared_norms",
    "assign",
    "assign_by_device",
    "lloyd_step_by_device",
    "lloyd_step_by_segment",
    "SegmentSteps",
    "segment_sums",
    "sq_distances_to",
    "squared_shift",
    "tolerance",
    "update_centers",
    "update_medians",
    "lloyd",
    "lloyd_by_device",
    "LloydResult",
    "DeviceLloydResult",
]

# rows per block: 256 rows of 784 float64 are 1.6 MB, within a core's L2 cache (measured best of
# 64..2048 in benchmarks/bench_kernel.py on 2 cores)
_BLOCK_ROWS = 256
# fast-math without nnan/ninf: masked centers are +inf and must stay so; reassociation lets the
# compiler vectorize the row-norm and sum reductions
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
# tasks per thread: a few, so that uneven blocks (small devices) still balance
_TASKS_PER_THREAD = 4
# Lloyd runs device by device when every device's rows fit in this much cache (a core's L2 is
# 0.5-2 MB) and there are at least this many devices per thread, each at most that share of rows
_DEVICE_CACHE_BYTES = 2**20
# up to this many centers per set the x.c products are direct loops, beyond it one BLAS GEMM per
# block (the crossover measured at d = 50..784 on 2 cores: loops 3x faster at k = 10, equal near
# k = 20, BLAS 1.3x faster at k = 50)
_DIRECT_MAX_K = 16
_DEVICES_PER_THREAD = 4
# passes of fewer multiply-adds (rows x centers x features) run on one thread: a parallel
# launch costs ~0.3 ms, the time of about this much work (measured on 2 cores, 50 rows x 5
# centers: 410 us a pass on two threads, 140 us on one)
_SERIAL_WORK = 2**18
# Weiszfeld steps per k-median update: each costs two passes over the data (the distances, then
# the weighted sums) and moves every center towards its cluster's geometric median at a linear
# rate. A few per Lloyd iteration, not a full solve: the next iteration starts from where this
# one stopped, so the steps add up while the clusters settle, and most of the first iterations'
# steps would be spent on clusters about to change. One alone would be too few: Lloyd stops at
# the first assignment that changes no label, which a small move easily is.
_WEISZFELD_STEPS = 5
# rows closer to a center than this many float ulps of the data's largest row norm are on it
# (Vardi & Zhang's step); below it a distance is rounding noise of the coordinates
_COINCIDENT_ULPS = 4
# rows per task of the sums that Elkan's path and the Weiszfeld steps take outside the pass: a
# fixed cut of the rows, so that the sums (and the centers) do not depend on the threads
_SUM_TASK_ROWS = 65536
# row ranges of a Weiszfeld step's sums, at most
_WEISZFELD_TASKS = 8

class _NumbaThreads(LibController):
    """numba's thread pool as threadpoolctl sees it: ``threadpool_limits(1)`` (or any limit
    without ``user_api``, or ``user_api="numba"``) then limits the kernels' threads too, as it
    does BLAS and OpenMP. Found by numba's helper library, which ``import numba`` loads; the
    count is set through numba's API (per calling thread, as numba keeps it)."""

    user_api = "numba"
    internal_api = "numba"
    filename_prefixes = ("_helperlib",)

    def get_num_threads(self):
        return numba.get_num_threads()

    def set_num_threads(self, num_threads):
        numba.set_num_threads(max(1, min(int(num_threads), numba.config.NUMBA_NUM_THREADS)))

    def get_version(self):
        return numba.__version__


threadpoolctl.register(_NumbaThreads)

_controller: ThreadpoolController | None = None


def _single_threaded_blas():
    """BLAS limited to one thread: the kernel's own threads call it, one block each."""
    global _controller
    if _controller is None:  # scanning the loaded libraries costs ~5 ms: do it once
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")


@contextlib.contextmanager
def _threads_for(work: int, direct: bool):
    """The kernel's threads for a pass of ``work`` multiply-adds: one below
    ``_SERIAL_WORK`` (waking the pool costs more than the pass: a federated round of a few
    clients' mini-batches), BLAS limited to one thread when the pass calls it."""
    serial = work < _SERIAL_WORK
    previous = numba.get_num_threads()
    if serial:
        numba.set_num_threads(1)
    try:
        if direct:
            yield
        else:
            with _single_threaded_blas():
                yield
    finally:
        if serial:
            numba.set_num_threads(previous)


def squared_norms(X: np.ndarray) -> np.ndarray:
    """Squared Euclidean norm of every row."""
    return np.einsum("ij,ij->i", X, X)


# --------------------------------------------------------------------------- compiled kernel


@njit(cache=True, fastmath=_FASTMATH)
def _direct_dots(X, s, stop, centers):  # pragma: no cover (compiled)
    """``X[s:stop] @ centers.T`` by loops over four centers at a time: for a few centers a
    BLAS GEMM is mostly overhead (3x slower at k = 10, d = 100), while these loops stream each
    row once per four centers and vectorize over the features."""
    k, d = centers.shape
    dots = np.empty((stop - s, k), dtype=X.dtype)
    for i in range(stop - s):
        row = s + i
        j = 0
        while j + 4 <= k:
            # accumulators in the data's precision, as a GEMM would keep them
            a0 = X.dtype.type(0)
            a1 = X.dtype.type(0)
            a2 = X.dtype.type(0)
            a3 = X.dtype.type(0)
            for f in range(d):
                x = X[row, f]
                a0 += x * centers[j, f]
                a1 += x * centers[j + 1, f]
                a2 += x * centers[j + 2, f]
                a3 += x * centers[j + 3, f]
            dots[i, j] = a0
            dots[i, j + 1] = a1
            dots[i, j + 2] = a2
            dots[i, j + 3] = a3
            j += 4
        while j < k:
            acc = X.dtype.type(0)
            for f in range(d):
                acc += X[row, f] * centers[j, f]
            dots[i, j] = acc
            j += 1
    return dots


@njit(cache=True, fastmath=_FASTMATH)
def _block_step(X, s, stop, x_sq, compute_x_sq, w, weighted, centers, centers_t, direct, c_sq,
                do_sums, base, labels, sq, sums,
                tot):  # pragma: no cover (compiled; its callers are tested)
    """The kernel's unit of work, rows ``s:stop`` against one center set (``centers`` and its
    transpose): the ``x.c`` products (one GEMM, or ``direct`` loops for a few centers), then per
    row the argmin, the squared distance and (``do_sums``) the weighted sums into
    ``sums[base + label]``. Returns how many rows changed label."""
    k = c_sq.shape[0]
    d = X.shape[1]
    dots = _direct_dots(X, s, stop, centers) if direct else np.dot(X[s:stop], centers_t)
    changed = 0
    for i in range(stop - s):
        row = s + i
        if compute_x_sq:
            acc = 0.0
            for f in range(d):
                acc += X[row, f] * X[row, f]
            x_sq[row] = acc
        best = np.inf
        arg = 0
        for j in range(k):
            v = c_sq[j] - 2.0 * dots[i, j]
            if v < best:
                best = v
                arg = j
        if labels[row] != arg:
            changed += 1
        labels[row] = arg
        # cancellation in the GEMM form can give tiny negatives
        dist = best + x_sq[row]
        sq[row] = dist if dist > 0.0 else 0.0
        if do_sums:
            wi = w[row] if weighted else 1.0
            seg = base + arg
            tot[seg] += wi
            for f in range(d):
                sums[seg, f] += wi * X[row, f]
    return changed


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _pass_kernel(X, x_sq, compute_x_sq, w, weighted, centers, centers_t, direct, c_sq,
                 block_start, block_stop, block_set, task_bounds, task_lo, part_off, do_sums,
                 labels, sq, part_sums, part_tot):  # pragma: no cover (compiled; wrappers tested)
    k = c_sq.shape[1]
    for t in prange(len(task_bounds) - 1):
        for b in range(task_bounds[t], task_bounds[t + 1]):
            z = block_set[b]
            _block_step(X, block_start[b], block_stop[b], x_sq, compute_x_sq, w, weighted,
                        centers[z], centers_t[z], direct, c_sq[z], do_sums,
                        part_off[t] + (z - task_lo[t]) * k, labels, sq, part_sums, part_tot)


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _local_lloyd_kernel(X, x_sq, compute_x_sq, w, weighted, centers, direct, mask, offsets,
                        block_rows, max_iter, labels, sq, sums, tot, n_iter,
                        converged):  # pragma: no cover (compiled; lloyd_by_device is tested)
    """Lloyd to convergence on every device, one device after the other on each thread: a
    device's rows stay in cache over all its iterations (the lock-step alternative streams the
    whole federation from memory once per iteration). Same blocks, same sums, same stopping
    rule as the lock-step passes of :func:`lloyd_by_device`."""
    Z, k, d = centers.shape
    for z in prange(Z):
        s, e = offsets[z], offsets[z + 1]
        # the transposed copy only feeds the BLAS route, as in _run_pass
        centers_t = np.empty((0, 0) if direct else (d, k), dtype=X.dtype)
        c_sq = np.empty(k)
        n = 0
        while True:
            for j in range(k):
                if not direct:
                    for f in range(d):
                        centers_t[f, j] = centers[z, j, f]
                c_sq[j] = _sq_norm(centers[z, j]) if mask[z, j] else np.inf
            sums[z * k:(z + 1) * k] = 0.0
            tot[z * k:(z + 1) * k] = 0.0
            changed = 0
            for b in range(s, e, block_rows):
                changed += _block_step(X, b, min(b + block_rows, e), x_sq,
                                       compute_x_sq and n == 0, w, weighted, centers[z],
                                       centers_t, direct, c_sq, True, z * k, labels, sq, sums,
                                       tot)
            if n > 0 and changed == 0:
                converged[z] = True
                break
            if n == max_iter:
                break
            n += 1
            for j in range(k):  # Lloyd's update; a cluster of weight <= 0 keeps its center
                if tot[z * k + j] > 0.0:
                    for f in range(d):
                        centers[z, j, f] = sums[z * k + j, f] / tot[z * k + j]
        n_iter[z] = n


@njit(parallel=True, cache=True)
def _segment_epochs_kernel(X, x_sq, compute_x_sq, w, weighted, own, direct, offsets, block_rows,
                           n_epochs, rate, labels, sq, sizes):  # pragma: no cover (compiled)
    """``n_epochs`` full-batch steps of every segment, one segment after the other on each
    thread: each a pass of :func:`_block_step` over the segment's blocks against its centers
    ``own[z]`` in the data's precision, then ``own <- own + rate * share * (means - own)`` in
    float64 (share 1 where the cluster has weight, else 0 with the center kept as the mean),
    the arithmetic of :meth:`SegmentSteps.step` followed by that update, without fast-math so
    that the update rounds as numpy's does. ``sizes[z]`` ends as the last epoch's weights."""
    Z, k, d = own.shape
    for z in prange(Z):
        s, e = offsets[z], offsets[z + 1]
        centers = np.empty((k, d), dtype=X.dtype)
        means = np.empty((k, d), dtype=X.dtype)
        # the transposed copy only feeds the BLAS route, as in _run_pass
        centers_t = np.empty((0, 0) if direct else (d, k), dtype=X.dtype)
        c_sq = np.empty(k)
        sums = np.empty((k, d))
        tot = np.empty(k)
        for epoch in range(n_epochs):
            for j in range(k):
                for f in range(d):
                    centers[j, f] = own[z, j, f]
                    if not direct:
                        centers_t[f, j] = centers[j, f]
                c_sq[j] = _sq_norm(centers[j])
            sums[:] = 0.0
            tot[:] = 0.0
            for b in range(s, e, block_rows):
                _block_step(X, b, min(b + block_rows, e), x_sq, compute_x_sq and epoch == 0, w,
                            weighted, centers, centers_t, direct, c_sq, True, 0, labels, sq,
                            sums, tot)
            for j in range(k):
                sizes[z, j] = tot[j]
                share = 1.0 if tot[j] > 0.0 else 0.0
                for f in range(d):
                    means[j, f] = sums[j, f] / tot[j] if tot[j] > 0.0 else centers[j, f]
                    own[z, j, f] = own[z, j, f] + (rate * share) * (np.float64(means[j, f])
                                                                    - own[z, j, f])


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _segment_sums_kernel(X, w, weighted, segments, task_bounds, part_sums,
                         part_tot):  # pragma: no cover (compiled; its wrapper is tested)
    d = X.shape[1]
    for t in prange(len(task_bounds) - 1):
        for row in range(task_bounds[t], task_bounds[t + 1]):
            wi = w[row] if weighted else 1.0
            seg = segments[row]
            part_tot[t, seg] += wi
            for f in range(d):
                part_sums[t, seg, f] += wi * X[row, f]


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _labelled_kernel(X, centers, labels, out):  # pragma: no cover (compiled; tested via wrapper)
    d = X.shape[1]
    for i in prange(X.shape[0]):
        acc = 0.0
        c = labels[i]
        for f in range(d):
            diff = X[i, f] - centers[c, f]
            acc += diff * diff
        out[i] = acc


@njit(inline="always", fastmath=_FASTMATH)
def _row_distance(X, i, centers, j):  # pragma: no cover (compiled)
    acc = 0.0
    for f in range(X.shape[1]):
        diff = np.float64(X[i, f]) - centers[j, f]
        acc += diff * diff
    return np.sqrt(acc)


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _elkan_start_kernel(X, centers, labels, upper, lower):  # pragma: no cover (compiled)
    """Every row's distance to every center (float64, from the differences): the exact
    bounds Elkan's iterations start from."""
    k = centers.shape[0]
    for i in prange(X.shape[0]):
        best, nearest = np.inf, 0
        for j in range(k):
            dist = _row_distance(X, i, centers, j)
            lower[i, j] = dist
            if dist < best:
                best, nearest = dist, j
        labels[i] = nearest
        upper[i] = best


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _elkan_kernel(X, centers, half_gap, reach, shift, drift, labels, upper,
                  lower):  # pragma: no cover (compiled)
    """One of Elkan's (2003) assignment steps after center ``j`` moved by ``shift[j]``.

    A row keeps an upper bound ``upper[i]`` on the distance to its center ``a`` and a lower
    bound on the distance to every other center ``j``, stored as ``lower[i, j] - drift[j]``
    with ``drift[j]`` the distance center ``j`` has moved in all (so a move costs no pass over
    the ``n x k`` bounds). Center ``j`` is a candidate only if both its lower bound and half the
    distance between the two centers (``half_gap[a, j]``, infinite on the diagonal) are below
    the row's upper bound; ``reach[a]``, the smallest ``half_gap[a, :]``, settles most rows
    at once. Only candidates' distances are computed (after the upper bound is made exact)."""
    k = centers.shape[0]
    for i in prange(X.shape[0]):
        a = labels[i]
        u = upper[i] + shift[a]
        if u > reach[a]:
            candidates = 0
            for j in range(k):  # branch-free, so that it vectorizes
                candidates += (lower[i, j] - drift[j] < u) & (half_gap[a, j] < u)
            if candidates:
                u = _row_distance(X, i, centers, a)
                lower[i, a] = u + drift[a]
                candidates = 0  # again with the exact distance: most rows have none left
                for j in range(k):
                    candidates += (lower[i, j] - drift[j] < u) & (half_gap[a, j] < u)
                if candidates:
                    nearest = a
                    for j in range(k):
                        if lower[i, j] - drift[j] < u and half_gap[nearest, j] < u:
                            dist = _row_distance(X, i, centers, j)
                            lower[i, j] = dist + drift[j]
                            if dist < u:
                                nearest, u = j, dist
                    a = nearest
        labels[i] = a
        upper[i] = u


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _weiszfeld_sums_kernel(X, centers, segments, w, weighted, eps, sq, use_sq, task_bounds,
                           part_sums, part_tot, part_eta):  # pragma: no cover (compiled)
    """One Weiszfeld step's sums in one pass over the rows: the distance of every row to its
    segment's center (``sq`` when ``use_sq``, else from the differences as
    :func:`_labelled_kernel`), then, off the center (distance > ``eps``), its pull
    ``w_i / ||x_i - c||`` into the segment's total and pulled sum, on it its weight into
    ``eta``; float64 partials per task of ``task_bounds``."""
    d = X.shape[1]
    for t in prange(len(task_bounds) - 1):
        for row in range(task_bounds[t], task_bounds[t + 1]):
            seg = segments[row]
            x = X[row]
            if use_sq:
                acc = sq[row]
            else:
                c = centers[seg]
                acc = 0.0
                for f in range(d):
                    diff = x[f] - c[f]
                    acc += diff * diff
            dist = np.sqrt(acc)
            wi = w[row] if weighted else 1.0
            if dist > eps:
                pull = wi / dist
                part_tot[t, seg] += pull
                into = part_sums[t, seg]
                for f in range(d):
                    into[f] += pull * x[f]
            else:
                part_eta[t, seg] += wi


@dataclass(frozen=True)
class _Plan:
    """How a pass deals rows to blocks and blocks to tasks.

    Block ``b`` is rows ``block_start[b]:block_stop[b]`` of center set ``block_set[b]``; task
    ``t`` runs blocks ``task_bounds[t]:task_bounds[t + 1]``, which touch the center sets
    ``task_lo[t]..task_hi[t]``. ``private`` is True when two tasks touch the same set: their
    sums then go to private partials that are added afterwards.
    """

    block_start: np.ndarray
    block_stop: np.ndarray
    block_set: np.ndarray
    task_bounds: np.ndarray
    task_lo: np.ndarray
    task_hi: np.ndarray
    private: bool


def _task_count(n_blocks: int) -> int:
    """Tasks of a pass over ``n_blocks`` blocks: a few per thread, at most one per block."""
    return max(1, min(n_blocks, numba.get_num_threads() * _TASKS_PER_THREAD))


def _whole_sets(sizes: np.ndarray, n: int, n_tasks: int) -> bool:
    """Whether sets of ``sizes`` rows (``n`` in all) are small enough for tasks cut only
    between sets (no set shared by two tasks: no private partial sums)."""
    return sizes.max() <= n / n_tasks


def _plan(offsets: np.ndarray) -> _Plan:
    """Blocks of at most ``_BLOCK_ROWS`` rows of one set each, dealt to tasks of about equal rows.

    ``offsets`` are CSR offsets: set ``z`` (one device, or the single set of :func:`assign`)
    owns rows ``offsets[z]:offsets[z + 1]``.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    n = int(offsets[-1])
    per_set = -(-sizes // _BLOCK_ROWS)
    block_set = np.repeat(np.arange(len(sizes), dtype=np.int64), per_set)
    first_block = np.concatenate([[0], np.cumsum(per_set)]).astype(np.int64)
    within = np.arange(len(block_set), dtype=np.int64) - first_block[block_set]
    block_start = offsets[block_set] + within * _BLOCK_ROWS
    block_stop = np.minimum(block_start + _BLOCK_ROWS, offsets[block_set + 1])
    n_blocks = len(block_set)
    n_tasks = _task_count(n_blocks)
    bounds = np.searchsorted(block_start, n * np.arange(1, n_tasks) / n_tasks)
    if n_blocks and _whole_sets(sizes, n, n_tasks):
        # small sets: cut tasks only between sets, so that no set is shared by two tasks
        bounds = first_block[block_set[np.minimum(bounds, n_blocks - 1)]]
    bounds = np.unique(np.concatenate([[0], bounds, [n_blocks]])).astype(np.int64)
    task_lo = block_set[bounds[:-1]] if n_blocks else np.zeros(0, np.int64)
    task_hi = block_set[bounds[1:] - 1] if n_blocks else np.zeros(0, np.int64)
    private = bool(np.any(task_lo[1:] <= task_hi[:-1]))
    return _Plan(block_start, block_stop, block_set, bounds, task_lo, task_hi, private)


def _direct(k: int) -> bool:
    """Whether a pass takes its ``x.c`` products by direct loops rather than BLAS (at most
    ``_DIRECT_MAX_K`` centers per set)."""
    return k <= _DIRECT_MAX_K


def _floating(X) -> np.ndarray:
    """``X`` as a C-contiguous float32 or float64 array (float32 stays float32)."""
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return np.ascontiguousarray(X)


@njit(cache=True)
def _sq_norm(v):  # pragma: no cover (compiled)
    """``||v||^2`` in float64, summed in order (no fast-math: the lock-step and the
    device-major Lloyd must get bit-identical center norms, hence identical labels)."""
    acc = 0.0
    for f in range(v.shape[0]):
        x = np.float64(v[f])
        acc += x * x
    return acc


@njit(cache=True)
def _sq_norms_of_sets(centers):  # pragma: no cover (compiled)
    out = np.empty(centers.shape[:2])
    for z in range(centers.shape[0]):
        for j in range(centers.shape[1]):
            out[z, j] = _sq_norm(centers[z, j])
    return out


def _center_sq_norms(centers: np.ndarray, center_mask: np.ndarray | None) -> np.ndarray:
    """Squared norms of center sets ``(n_sets, k, d)``; masked centers are +inf."""
    c_sq = _sq_norms_of_sets(np.ascontiguousarray(centers))
    if center_mask is not None:
        c_sq = np.where(np.broadcast_to(center_mask, c_sq.shape), c_sq, np.inf)
    return c_sq


@dataclass
class _PassResult:
    labels: np.ndarray      # (n,) index in [0, k) of the nearest center of the row's set
    sq: np.ndarray          # (n,) squared distance to it
    x_sq: np.ndarray        # (n,) float64 squared norms of the rows (for the next pass)
    sums: np.ndarray | None    # (n_sets * k, d) float64 weighted sums of every cluster's rows
    totals: np.ndarray | None  # (n_sets * k,) float64 weight of every cluster


def _run_pass(X, x_sq, centers, plan: _Plan, *, center_mask=None, weights=None,
              sums: bool = False) -> _PassResult:
    """One pass over ``X``: nearest center of every row among its set's ``centers`` (shape
    ``(n_sets, k, d)``) and, with ``sums=True``, every cluster's weighted sum and weight.

    ``x_sq`` is None (computed in the pass) or the rows' squared norms.
    """
    n, d = X.shape
    n_sets, k, _ = centers.shape
    centers = np.ascontiguousarray(centers, dtype=X.dtype)
    direct = _direct(k)
    # the transposed copy only feeds the BLAS route (with a set per device it is data-sized)
    centers_t = np.empty((n_sets, 0, 0), dtype=X.dtype) if direct else \
        np.ascontiguousarray(np.swapaxes(centers, 1, 2))
    c_sq = _center_sq_norms(centers, center_mask).reshape(n_sets, k)
    compute_x_sq = x_sq is None
    x_sq = np.empty(n, dtype=np.float64) if compute_x_sq else np.asarray(x_sq, np.float64)
    w = np.empty(0) if weights is None else np.asarray(weights, dtype=np.float64)
    labels = np.empty(n, dtype=np.int64)
    sq = np.empty(n, dtype=X.dtype)
    n_tasks = len(plan.task_bounds) - 1
    if not sums:
        part_sums, part_tot, part_off = np.zeros((1, 1)), np.zeros(1), np.zeros(n_tasks, np.int64)
    elif plan.private:
        spans = (plan.task_hi - plan.task_lo + 1) * k
        part_off = np.concatenate([[0], np.cumsum(spans)[:-1]]).astype(np.int64)
        part_sums, part_tot = np.zeros((spans.sum(), d)), np.zeros(spans.sum())
    else:
        part_off = plan.task_lo * k
        part_sums, part_tot = np.zeros((n_sets * k, d)), np.zeros(n_sets * k)
    with _threads_for(n * k * d, direct):
        _pass_kernel(X, x_sq, compute_x_sq, w, weights is not None, centers, centers_t,
                     direct, c_sq,
                     plan.block_start, plan.block_stop, plan.block_set, plan.task_bounds,
                     plan.task_lo, part_off, sums, labels, sq, part_sums, part_tot)
    if not sums:
        return _PassResult(labels, sq, x_sq, None, None)
    if plan.private:
        totals_sums, totals = np.zeros((n_sets * k, d)), np.zeros(n_sets * k)
        for t in range(n_tasks):  # a few tasks, each adding its block of clusters
            lo, span = plan.task_lo[t] * k, (plan.task_hi[t] - plan.task_lo[t] + 1) * k
            totals_sums[lo:lo + span] += part_sums[part_off[t]:part_off[t] + span]
            totals[lo:lo + span] += part_tot[part_off[t]:part_off[t] + span]
        part_sums, part_tot = totals_sums, totals
    return _PassResult(labels, sq, x_sq, part_sums, part_tot)


def _means(sums: np.ndarray, totals: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Lloyd's update from a pass's sums: a cluster of total weight <= 0 keeps its center."""
    centers = np.array(previous, copy=True).reshape(-1, previous.shape[-1])
    # in place: with one center set per device these arrays are as large as the data
    np.divide(sums, totals[:, None], out=centers, where=(totals > 0)[:, None],
              casting="unsafe")
    return centers.reshape(previous.shape)


class _Cycle:
    """Where a Lloyd run that has entered a cycle can stop with the result of ``max_iter``.

    A Lloyd iteration's next centers are a function of its centers alone (the rows' nearest
    centers under them, then the update from those labels and, for clusters of weight <= 0,
    the centers kept), and the kernel's passes are deterministic. So once the centers of
    iteration ``n`` equal, bit for bit, those of an earlier iteration ``j``, the run repeats
    itself with period ``p = n - j`` and never converges (a period of 1 is convergence, which
    the label test catches first), and iteration ``max_iter`` has the centers of iteration
    ``n + (max_iter - n) % p``: the run stops there with exactly the result that running on to
    ``max_iter`` would give. With negative weights (a distributed coreset's centers) most
    runs end in such a cycle and would otherwise spend their remaining iterations in it.

    Centers are compared by a 128-bit BLAKE2b digest of their bytes (a false match has
    probability about ``max_iter**2 / 2**129``); only the digests are kept.
    """

    def __init__(self, max_iter: int, centers: np.ndarray):
        self.max_iter = max_iter
        self.end = None
        self.seen = {self._digest(centers): 0}

    @staticmethod
    def _digest(centers: np.ndarray) -> bytes:
        return hashlib.blake2b(np.ascontiguousarray(centers).data, digest_size=16).digest()

    def at_end(self, n_iter: int, centers: np.ndarray) -> bool:
        """Whether iteration ``n_iter``, whose centers are ``centers``, has the state that
        iteration ``max_iter`` would have."""
        if self.end is None:
            key = self._digest(centers)
            first = self.seen.setdefault(key, n_iter)
            if first != n_iter:
                self.end = n_iter + (self.max_iter - n_iter) % (n_iter - first)
        return self.end == n_iter


_OBJECTIVES = ("kmeans", "kmedian")


def _check_objective(objective) -> str:
    return check_choice(objective, "objective", _OBJECTIVES)


def _coincidence_floor(dtype, x_sq: np.ndarray) -> float:
    """``eps`` of the k-median update: ``_COINCIDENT_ULPS`` ulps of the largest row norm
    (0 for all-zero data, where only exact coincidence counts)."""
    scale = float(np.sqrt(x_sq.max(initial=0.0)))
    return _COINCIDENT_ULPS * float(np.finfo(dtype).eps) * scale


def _weiszfeld(X, segments, centers, weights, eps: float, n_steps: int,
               sq: np.ndarray | None = None) -> np.ndarray:
    """``n_steps`` Weiszfeld steps (with Vardi & Zhang's rule for rows on the center) of
    every center of ``centers`` (flat, ``(n_segments, d)``, ``X``'s dtype) towards the
    weighted geometric median of the rows of its segment; see :func:`update_medians`.
    ``sq``: :func:`sq_distances_to` of ``centers``, when the caller has it already."""
    n_segments, d = centers.shape
    n = X.shape[0]
    w = np.empty(0) if weights is None else np.asarray(weights, dtype=np.float64)
    segments = np.asarray(segments, dtype=np.int64)
    # a fixed cut of the rows (not one per thread): the sums do not depend on the threads
    n_tasks = min(_WEISZFELD_TASKS, max(1, -(-n // _SUM_TASK_ROWS)))
    bounds = (n * np.arange(n_tasks + 1) // n_tasks).astype(np.int64)
    given = np.empty(0) if sq is None else np.asarray(sq, dtype=np.float64)
    for i in range(n_steps):
        part_sums = np.zeros((n_tasks, n_segments, d))
        part_tot, part_eta = np.zeros((n_tasks, n_segments)), np.zeros((n_tasks, n_segments))
        # one pass: every row's distance to its center, its pull w_i / ||x_i - c|| (rows off
        # the center) or its weight in eta (rows on it), and the pulled sums
        _weiszfeld_sums_kernel(X, np.ascontiguousarray(centers, dtype=X.dtype), segments, w,
                               weights is not None, eps, given, i == 0 and sq is not None,
                               bounds, part_sums, part_tot, part_eta)
        sums, totals, eta = part_sums.sum(axis=0), part_tot.sum(axis=0), part_eta.sum(axis=0)
        c = centers.astype(np.float64)
        moving = totals > 0.0  # else (empty, or a denominator <= 0) the center stays
        target = np.divide(sums, totals[:, None], out=c.copy(), where=moving[:, None])
        # Vardi & Zhang (2000): rows of weight eta on the center hold it while the others'
        # resultant pull ||R|| = ||sum_i w_i (x_i - c) / ||x_i - c||| is at most eta (the center
        # is then the median: its subgradient contains 0), else it moves the share
        # 1 - eta / ||R|| of the Weiszfeld step; eta = 0 is Weiszfeld's step itself
        resultant = np.linalg.norm(sums - totals[:, None] * c, axis=1)
        eta = np.maximum(eta, 0.0)
        hold = np.minimum(np.divide(eta, resultant, out=np.ones_like(eta),
                                    where=resultant > 0.0), 1.0)
        step = hold[:, None] * c + (1.0 - hold)[:, None] * target
        centers = np.where(moving[:, None], step, c).astype(centers.dtype)
    return centers


# --------------------------------------------------------------------------- public API


def assign(X: np.ndarray, centers: np.ndarray, *, x_sq: np.ndarray | None = None,
           center_mask: np.ndarray | None = None):
    """Nearest center of every row.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    centers : ndarray of shape (k, d)
    x_sq : ndarray of shape (n,), optional
        Precomputed :func:`squared_norms` of ``X`` (otherwise computed in the same pass).
    center_mask : ndarray of shape (k,) of bool, optional
        Centers marked False are never chosen.

    Returns
    -------
    labels : ndarray of shape (n,) of int64
    sq_distances : ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [9.0, 9.0]])
    >>> labels, sq = assign(X, np.array([[0.0, 0.5], [9.0, 9.0]]))
    >>> labels.tolist(), sq.tolist()
    ([0, 0, 1], [0.25, 0.25, 0.0])
    """
    X = _floating(X)
    centers = np.asarray(centers, dtype=X.dtype)
    mask = None if center_mask is None else np.asarray(center_mask)[None]
    result = _run_pass(X, x_sq, centers[None], _plan(np.array([0, X.shape[0]])),
                       center_mask=mask)
    return result.labels, result.sq


def assign_by_device(federation: Federation, centers: np.ndarray, *,
                     center_mask: np.ndarray | None = None, x_sq: np.ndarray | None = None):
    """Nearest center of every row among the centers of the row's own device.

    All devices in one pass of the kernel: each device's rows are a contiguous slice of the
    federation, cut into blocks that each meet only their own device's centers.

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
    X = _floating(federation.X)
    result = _run_pass(X, x_sq, np.asarray(centers, dtype=X.dtype), _plan(federation.offsets),
                       center_mask=center_mask)
    return result.labels, result.sq


def lloyd_step_by_device(federation: Federation, centers: np.ndarray, *,
                         weights: np.ndarray | None = None, x_sq: np.ndarray | None = None):
    """One Lloyd step on every device in one pass: assign each row to its device's nearest
    center and sum the rows of every cluster for the update that follows.

    Parameters
    ----------
    federation : Federation
    centers : ndarray of shape (n_devices, k, d)
    weights : ndarray of shape (n_samples,), optional
        Row weights, sorted-row order (the update's means are weighted).
    x_sq : ndarray of shape (n_samples,), optional

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Nearest center (index in ``[0, k)``) of the row's device, under ``centers``.
    sq_distances : ndarray of shape (n_samples,)
        Under ``centers``.
    next_centers : ndarray of shape (n_devices, k, d)
        Every cluster's (weighted) mean; a cluster of total weight <= 0 keeps its center.
    totals : ndarray of shape (n_devices, k)
        Weight (count when unweighted) of every cluster.
    """
    return lloyd_step_by_segment(federation.X, federation.offsets, centers, weights=weights,
                                 x_sq=x_sq)


def lloyd_step_by_segment(X: np.ndarray, offsets: np.ndarray, centers: np.ndarray, *,
                          weights: np.ndarray | None = None, x_sq: np.ndarray | None = None):
    """:func:`lloyd_step_by_device` on any rows cut into contiguous segments, each with its
    own centers: segment ``z`` is rows ``offsets[z]:offsets[z + 1]`` (possibly empty) and
    meets only ``centers[z]`` -- e.g. one mini-batch of every sampled client of a federated
    round, all in one pass.

    Returns
    -------
    labels, sq_distances, next_centers, totals
        As :func:`lloyd_step_by_device`; an empty segment's centers are kept.
    """
    return SegmentSteps(X, offsets, weights=weights, x_sq=x_sq).step(centers)


class SegmentSteps:
    """Lloyd steps on fixed rows cut into fixed segments, only the centers changing between
    steps (a client's full-batch epochs): the pass's plan and the rows' squared norms are
    computed once, where :func:`lloyd_step_by_segment` would compute them on every call.
    Each :meth:`step` gives what :func:`lloyd_step_by_segment` gives, bit for bit.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    offsets : ndarray of shape (n_segments + 1,)
        Segment ``z`` is rows ``offsets[z]:offsets[z + 1]``.
    weights : ndarray of shape (n,), optional
    x_sq : ndarray of shape (n,), optional
        The rows' squared norms, if known.
    """

    def __init__(self, X, offsets, *, weights=None, x_sq=None):
        self.X = _floating(X)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        if self.offsets.ndim != 1 or len(self.offsets) < 1 or self.offsets[0] != 0 \
                or self.offsets[-1] != self.X.shape[0] or np.any(np.diff(self.offsets) < 0):
            raise ValueError(f"offsets must be non-decreasing row offsets from 0 to "
                             f"{self.X.shape[0]}")
        self.weights = weights
        self.x_sq = x_sq
        self._planned = None

    @property
    def _plan(self) -> _Plan:
        # made on first use: the fused epochs of small segments need none
        if self._planned is None:
            self._planned = _plan(self.offsets)
        return self._planned

    def step(self, centers):
        """One Lloyd step of every segment from its centers ``(n_segments, k, d)``.

        Returns
        -------
        labels, sq_distances, next_centers, totals
            As :func:`lloyd_step_by_device`; an empty segment's centers are kept.
        """
        centers = np.asarray(centers, dtype=self.X.dtype)
        if len(self.offsets) != centers.shape[0] + 1:
            raise ValueError(f"offsets must be {centers.shape[0] + 1} non-decreasing row "
                             f"offsets from 0 to {self.X.shape[0]}")
        result = _run_pass(self.X, self.x_sq, centers, self._plan, weights=self.weights,
                           sums=True)
        self.x_sq = result.x_sq  # the same norms, computed once
        next_centers = _means(result.sums, result.totals, centers)
        return result.labels, result.sq, next_centers, result.totals.reshape(centers.shape[:2])

    def epochs(self, centers, n_epochs: int, rate: float):
        """``n_epochs`` damped full-batch steps of every segment: each moves the segment's
        centers by ``rate`` towards the means of a :meth:`step`, ``C <- C + rate (M - C)``,
        only for the clusters that have rows (a client's epochs of federated k-means).

        Parameters
        ----------
        centers : ndarray of shape (n_segments, k, d)
            The starting centers (float64; not modified).
        n_epochs : int
        rate : float

        Returns
        -------
        sizes : ndarray of shape (n_segments, k)
            The last epoch's cluster weights (zeros when ``n_epochs`` is 0).
        centers : ndarray of shape (n_segments, k, d)
            The centers after the epochs, float64: bit for bit those of :meth:`step`
            followed by the update in numpy.
        """
        own = np.array(centers, dtype=np.float64)  # a copy: the kernel moves it in place
        n_segments, k, d = own.shape
        if len(self.offsets) != n_segments + 1:
            raise ValueError(f"offsets must be {n_segments + 1} non-decreasing row offsets "
                             f"from 0 to {self.X.shape[0]}")
        sizes = np.zeros((n_segments, k))
        rows = np.diff(self.offsets)
        n_blocks = int((-(-rows // _BLOCK_ROWS)).sum())
        if n_blocks and not _whole_sets(rows, self.X.shape[0], _task_count(n_blocks)) \
                and self._plan.private:
            # a segment shared by two tasks sums its rows in two partials: step by step, so
            # that the sums are :meth:`step`'s
            for _ in range(n_epochs):
                _, _, means, sizes = self.step(own)
                share = np.divide(sizes, sizes, out=np.zeros_like(sizes), where=sizes > 0)
                own = own + (rate * share)[..., None] * (means - own)
            return sizes, own
        n = self.X.shape[0]
        compute_x_sq = self.x_sq is None
        x_sq = np.empty(n) if compute_x_sq else np.asarray(self.x_sq, np.float64)
        w = np.empty(0) if self.weights is None else np.asarray(self.weights, np.float64)
        direct = _direct(k)
        with _threads_for(n * k * d * max(int(n_epochs), 1), direct):
            _segment_epochs_kernel(self.X, x_sq, compute_x_sq, w, self.weights is not None,
                                   own, direct, self.offsets, _BLOCK_ROWS, int(n_epochs),
                                   float(rate), np.empty(n, np.int64),
                                   np.empty(n, self.X.dtype), sizes)
        if compute_x_sq and n_epochs > 0:
            self.x_sq = x_sq
        return sizes, own


def sq_distances_to(X: np.ndarray, centers: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Squared distance of every row to its given center ``centers[labels[i]]``, without the
    ``n x d`` temporary of ``X - centers[labels]``."""
    X = _floating(X)
    centers = np.ascontiguousarray(centers, dtype=X.dtype)
    out = np.empty(X.shape[0], dtype=np.float64)
    _labelled_kernel(X, centers, np.asarray(labels, dtype=np.int64), out)
    return out


def segment_sums(X: np.ndarray, segments: np.ndarray, n_segments: int,
                 weights: np.ndarray | None = None):
    """Weighted sum and total weight of the rows in each segment.

    Returns
    -------
    sums : ndarray of shape (n_segments, d)
    totals : ndarray of shape (n_segments,)
        In ``X``'s dtype (accumulated in float64).
    """
    X = _floating(X)
    n, d = X.shape
    # one partial per task; with many segments, fewer tasks keep the partials small
    n_tasks = max(1, min(numba.get_num_threads(), n // _BLOCK_ROWS,
                         2**24 // max(n_segments * (d + 1), 1)))
    sums, totals = _segment_sums64(X, segments, n_segments, weights, n_tasks)
    return sums.astype(X.dtype), totals.astype(X.dtype)


def _segment_sums64(X, segments, n_segments: int, weights, n_tasks: int):
    """:func:`segment_sums` in float64, over ``n_tasks`` equal row ranges (the order in which
    rows are added depends on ``n_tasks`` only)."""
    n, d = X.shape
    bounds = (n * np.arange(n_tasks + 1) // n_tasks).astype(np.int64)
    part_sums = np.zeros((n_tasks, n_segments, d))
    part_tot = np.zeros((n_tasks, n_segments))
    w = np.empty(0) if weights is None else np.asarray(weights, dtype=np.float64)
    _segment_sums_kernel(X, w, weights is not None, np.asarray(segments, dtype=np.int64),
                         bounds, part_sums, part_tot)
    return part_sums.sum(axis=0), part_tot.sum(axis=0)


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
    n_segments = int(np.prod(previous.shape[:-1]))
    sums, totals = segment_sums(X, labels, n_segments, weights)
    centers = _means(sums, totals, previous).astype(previous.dtype, copy=False)
    return centers, totals.reshape(previous.shape[:-1])


def update_medians(X: np.ndarray, labels: np.ndarray, previous: np.ndarray,
                   weights: np.ndarray | None = None, *, n_steps: int = _WEISZFELD_STEPS):
    """The k-median update step: every center moves towards the weighted geometric median of
    its points, ``argmin_c sum_i w_i ||x_i - c||``, by ``n_steps`` Weiszfeld steps from
    ``previous``.

    One step is ``c <- sum_i a_i x_i / sum_i a_i`` with ``a_i = w_i / ||x_i - c||`` over the
    cluster's rows off the center (Weiszfeld 1937). Rows *on* the center (closer than ``eps``,
    ``_COINCIDENT_ULPS`` float ulps of the largest row norm of ``X``) have no such weight; with
    ``eta`` their total weight and ``R = sum_i a_i (x_i - c)`` the others' pull, the center
    stays when ``||R|| <= eta`` (it is then the median) and else moves by the share
    ``1 - eta / ||R||`` of the step (Vardi & Zhang 2000, which keeps the cost decreasing for
    positive weights and converges to the median even from a data point).

    A cluster that is empty, or whose denominator ``sum_i a_i`` is <= 0 (negative weights),
    keeps its center; a negative ``eta`` counts as 0. Works for flat centers ``(k, d)`` and,
    with ``labels`` running over ``n_devices * k`` segments, for per-device centers
    ``(Z, k, d)``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    labels : ndarray of shape (n,)
        Segment (cluster) of every row.
    previous : ndarray of shape (k, d) or (Z, k, d)
        Where the steps start.
    weights : ndarray of shape (n,), optional
    n_steps : int, default=_WEISZFELD_STEPS

    Returns
    -------
    centers : ndarray, same shape as ``previous``
    totals : ndarray of the leading shape of ``previous``
        Number (or weight) of points in every cluster.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [10.0, 10.0]])
    >>> centers, totals = update_medians(X, np.zeros(4, dtype=int), X[:1], n_steps=50)
    >>> centers.round(6).tolist(), totals.tolist()  # where the diagonals cross, not the mean
    ([[1.0, 1.0]], [4.0])
    """
    X = _floating(X)
    labels = np.asarray(labels, dtype=np.int64)
    previous = np.asarray(previous)
    d = previous.shape[-1]
    flat = np.array(previous, dtype=X.dtype).reshape(-1, d)
    eps = _coincidence_floor(X.dtype, squared_norms(X))
    centers = _weiszfeld(X, labels, flat, weights, eps, n_steps)
    totals = np.bincount(labels, weights=None if weights is None else
                         np.asarray(weights, dtype=np.float64), minlength=len(flat))
    return centers.reshape(previous.shape), totals.astype(np.float64).reshape(
        previous.shape[:-1])


@dataclass
class LloydResult:
    """Output of :func:`lloyd`.

    ``sq_distances`` are the rows' *squared* distances to their centers whatever the
    ``objective``; ``inertia`` is that objective's cost.
    """

    centers: np.ndarray
    labels: np.ndarray
    sq_distances: np.ndarray
    cluster_weights: np.ndarray
    n_iter: int
    converged: bool
    weights: np.ndarray | None = None
    objective: str = "kmeans"
    #: Whether the last update moved the centers by at most ``tol`` (the run stopped there,
    #: with the labels of those centers) rather than leaving every label unchanged.
    by_shift: bool = False

    @property
    def inertia(self) -> float:
        """The (weighted) cost of the rows under ``centers``: ``sum_i w_i ||x_i - c||^2``
        for k-means, ``sum_i w_i ||x_i - c||`` for k-median."""
        if self.objective == "kmedian":
            distances = np.sqrt(self.sq_distances.astype(np.float64))
            return float(distances.sum() if self.weights is None else distances @ self.weights)
        if self.weights is None:
            return float(self.sq_distances.sum())
        return float(self.sq_distances @ self.weights)


def lloyd(X: np.ndarray, init: np.ndarray, *, weights: np.ndarray | None = None,
          max_iter: int = 300, on_iteration=None, objective: str = "kmeans",
          algorithm: str = "lloyd", tol: float = 0.0) -> LloydResult:
    """Lloyd's algorithm from ``init``: alternate update and assignment steps.

    Every iteration is one pass of the kernel: the assignment to the current centers and the
    sums that the next update divides.

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
    objective : {"kmeans", "kmedian"}, default="kmeans"
        ``"kmedian"``: the same assignments, and an update that moves every center
        ``_WEISZFELD_STEPS`` Weiszfeld steps towards the weighted geometric median of its rows
        (:func:`update_medians`) instead of to their mean; the cost is then
        ``sum_i w_i ||x_i - c(x_i)||``, which no iteration increases (positive weights).
    algorithm : {"lloyd", "elkan"}, default="lloyd"
        How the assignment step is computed (the iterations are the same; k-means only for
        ``"elkan"``): ``"lloyd"``, the kernel's pass over every row and center;
        ``"elkan"``, Elkan's (2003) triangle-inequality bounds, which compute a distance only
        where the bounds cannot rule a center out (as scikit-learn's
        ``KMeans(algorithm="elkan")``; it keeps an ``n x k`` float32 array of bounds). Many
        times fewer distances once most centers settle; a near-tie may be broken the other
        way (see :func:`_elkan_iterations`).
    tol : float, default=0.0
        Convergence also when an update moves the centers by at most ``tol`` in all (the sum
        of their squared shifts, scikit-learn's ``center_shift_tot``; an absolute value:
        :func:`tolerance` scales one by the data); ``0`` stops only when no label changes.
        k-means only: a k-median run ignores it.
        The labels returned are always those of the returned centers.

    A run whose centers come back, bit for bit, to those of an earlier iteration without
    converging repeats itself from there: without ``on_iteration`` it stops at the iteration
    whose result equals that of iteration ``max_iter`` and reports ``n_iter = max_iter``
    (see :class:`_Cycle`).

    Returns
    -------
    LloydResult
        ``labels`` and ``sq_distances`` refer to the returned centers; ``sq_distances`` are
        unweighted (and squared, for either objective), ``inertia`` (the objective's cost)
        and ``cluster_weights`` weighted.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> result = lloyd(X, np.array([[0.0], [1.0]]))
    >>> result.centers.ravel().tolist(), result.labels.tolist(), result.converged
    ([0.5, 10.5], [0, 0, 1, 1], True)
    >>> X = np.array([[0.0], [1.0], [2.0], [9.0], [10.0], [20.0]])
    >>> result = lloyd(X, np.array([[0.0], [10.0]]), objective="kmedian")
    >>> result.centers.ravel().round(4).tolist(), round(result.inertia, 4)  # medians, sum |x - c|
    ([1.0, 10.0], 13.0)
    """
    _check_objective(objective)
    check_choice(algorithm, "algorithm", {"lloyd", "elkan"})
    X = _floating(X)
    centers = np.array(init, dtype=X.dtype, copy=True)
    plan = _plan(np.array([0, X.shape[0]]))
    if algorithm == "elkan":
        if objective != "kmeans":
            raise ValueError("algorithm='elkan' is k-means only (objective='kmeans'); got "
                             f"objective={objective!r}")
        centers, labels, sq, cluster_weights, n_iter, converged = _elkan_iterations(
            X, centers, weights=weights, max_iter=max_iter, on_iteration=on_iteration,
            tol=tol)
        return LloydResult(centers=centers, labels=labels, sq_distances=sq,
                           cluster_weights=cluster_weights, n_iter=n_iter, converged=converged,
                           weights=None if weights is None else np.asarray(weights))
    if objective == "kmedian":
        centers, labels, sq, n_iter, converged = _kmedian_iterations(
            X, centers[None], plan, None, weights=weights, max_iter=max_iter,
            on_iteration=on_iteration)
        w = None if weights is None else np.asarray(weights)
        cluster_weights = np.bincount(labels, weights=w, minlength=centers.shape[1])
        return LloydResult(centers=centers[0], labels=labels, sq_distances=sq,
                           cluster_weights=cluster_weights.astype(np.float64), n_iter=n_iter,
                           converged=converged, weights=w, objective="kmedian")
    # the first pass computes the rows' norms; the later ones reuse them
    step = _run_pass(X, None, centers[None], plan, weights=weights, sums=True)
    if on_iteration is not None:
        on_iteration(0, centers, step.labels, step.sq)
    converged = by_shift = False
    n_iter = 0
    cycle = None if on_iteration is not None else _Cycle(max_iter, centers)
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is kept after the loop)
        previous, centers = centers, _means(step.sums, step.totals, centers)
        new = _run_pass(X, step.x_sq, centers[None], plan, weights=weights, sums=True)
        if on_iteration is not None:
            on_iteration(n_iter, centers, new.labels, new.sq)
        same = np.array_equal(new.labels, step.labels)
        step = new
        by_shift = _settled(previous, centers, tol)
        if same or by_shift:
            converged = True
            break
        if cycle is not None and cycle.at_end(n_iter, centers):
            n_iter = max_iter
            break
    return LloydResult(centers=centers, labels=step.labels, sq_distances=step.sq,
                       cluster_weights=step.totals, n_iter=n_iter, converged=converged,
                       weights=None if weights is None else np.asarray(weights),
                       by_shift=by_shift)


def squared_shift(previous, centers) -> float:
    """The sum over every coordinate of ``(centers - previous) ** 2``, in float64: how far a
    set of centers moved, the measure of every ``tol`` test (arrays of any shape; a scalar
    ``previous`` of 0 gives the squared norm of ``centers``)."""
    shift = (np.asarray(centers, dtype=np.float64) - np.asarray(previous, dtype=np.float64))
    shift = shift.ravel()
    return float(shift @ shift)


def _settled(previous: np.ndarray, centers: np.ndarray, tol: float) -> bool:
    """Whether an update moved the centers by at most ``tol`` in all
    (:func:`squared_shift`); never with ``tol = 0``, where only unchanged labels stop."""
    return tol > 0 and squared_shift(previous, centers) <= tol


def tolerance(X: np.ndarray, tol: float, weights: np.ndarray | None = None) -> float:
    """``tol`` times the mean over features of the (weighted) variance of ``X``: the absolute
    tolerance of :func:`lloyd` for a relative ``tol``, as scikit-learn's ``KMeans`` scales
    its ``tol`` (weighted here, and 0 for ``tol = 0``).

    Returns
    -------
    float
    """
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if tol == 0 or (w is not None and not w.sum() > 0):
        return 0.0
    X = np.asarray(X, dtype=np.float64)
    mean = np.average(X, axis=0, weights=w)
    variance = np.average((X - mean) ** 2, axis=0, weights=w)
    return float(np.mean(variance) * tol)


def _elkan_iterations(X, centers, *, weights, max_iter, on_iteration, tol=0.0):
    """The k-means iterations of :func:`lloyd` with Elkan's (2003) assignment step.

    The same Lloyd iteration (assign every row to its nearest center, move every center to
    the weighted mean of its rows, stop when no label changes or after ``max_iter`` updates),
    with the assignment computed from bounds: a row keeps an upper bound on the distance to
    its center and a lower bound on the distance to every other center, both moved by how far
    the centers moved, and a distance is computed only where the bounds cannot decide. On a
    distributed coreset's weighted solves (negative weights: most centers settle while a few
    oscillate) about 2 % of the row-center distances need computing per iteration.

    Distances come from the differences in float64, where the kernel's pass uses the GEMM
    form in the data's dtype: a near-tie (within the GEMM form's rounding, about ``eps
    ||x||^2``) may go the other way, as may one within the float32 rounding of the stored
    lower bounds (relative 6e-8), and an exact tie goes to the current center rather than
    the lowest index. Returns the centers, labels, squared distances (from the differences),
    cluster weights, ``n_iter`` and whether it converged.
    """
    n, d = X.shape
    k = centers.shape[0]
    n_tasks = max(1, -(-n // _SUM_TASK_ROWS))
    labels = np.empty(n, dtype=np.int64)
    upper, lower = np.empty(n), np.empty((n, k), dtype=np.float32)
    c64 = centers.astype(np.float64)
    drift = np.zeros(k)
    _elkan_start_kernel(X, c64, labels, upper, lower)
    if on_iteration is not None:
        on_iteration(0, centers, labels, sq_distances_to(X, centers, labels).astype(X.dtype))
    cycle = None if on_iteration is not None else _Cycle(max_iter, centers)
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is kept after the loop)
        sums, totals = _segment_sums64(X, labels, k, weights, n_tasks)
        centers = _means(sums, totals, centers)
        moved = centers.astype(np.float64)
        shift = np.sqrt(((moved - c64) ** 2).sum(axis=1))
        half_gap = 0.5 * cdist(moved, moved)
        np.fill_diagonal(half_gap, np.inf)
        drift += shift
        previous = labels.copy()
        _elkan_kernel(X, moved, half_gap, half_gap.min(axis=1), shift, drift, labels, upper,
                      lower)
        c64 = moved
        if on_iteration is not None:
            on_iteration(n_iter, centers, labels,
                         sq_distances_to(X, centers, labels).astype(X.dtype))
        if np.array_equal(labels, previous) or tol > 0 and float((shift ** 2).sum()) <= tol:
            converged = True
            break
        if cycle is not None and cycle.at_end(n_iter, centers):
            n_iter = max_iter
            break
    sq = sq_distances_to(X, centers, labels)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    cluster_weights = np.bincount(labels, weights=w, minlength=k).astype(np.float64)
    return centers, labels, sq.astype(X.dtype), cluster_weights, n_iter, converged


def _kmedian_iterations(X, centers, plan, base, *, center_mask=None, x_sq=None, weights=None,
                        max_iter, on_iteration=None):
    """The k-median iterations of :func:`lloyd` and :func:`lloyd_by_device`: the kernel's
    passes assign (no sums: the update is not a mean), :func:`_weiszfeld` updates every center
    set's centers at once (the segment of a row is ``base + label``, ``base`` None for one
    set); the same stopping rule as k-means.

    The squared distances reported (to ``on_iteration`` and returned) are taken from the
    differences (:func:`sq_distances_to`), not from the GEMM form: near a center its rounding
    (``~eps ||x||^2``) becomes ``~sqrt(eps) ||x||`` under the square root, visible in the
    k-median cost of a heavy coreset center. They cost no extra pass but the last: they are
    the first distances the next Weiszfeld step needs.

    Returns the centers ``(n_sets, k, d)``, labels, squared distances, ``n_iter`` and whether
    it converged."""
    Z, k, d = centers.shape

    def segments_of(labels):
        return labels if base is None else base + labels

    step = _run_pass(X, x_sq, centers, plan, center_mask=center_mask)
    eps = _coincidence_floor(X.dtype, step.x_sq)
    flat = centers.reshape(Z * k, d)
    sq = sq_distances_to(X, flat, segments_of(step.labels))
    if on_iteration is not None:
        on_iteration(0, flat, step.labels, sq.astype(X.dtype, copy=False))
    converged = False
    n_iter = 0
    cycle = None if on_iteration is not None else _Cycle(max_iter, flat)
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is kept after the loop)
        # padding centers own no rows: the update keeps them
        flat = _weiszfeld(X, segments_of(step.labels), flat, weights, eps, _WEISZFELD_STEPS,
                          sq)
        new = _run_pass(X, step.x_sq, flat.reshape(Z, k, d), plan, center_mask=center_mask)
        sq = sq_distances_to(X, flat, segments_of(new.labels))
        if on_iteration is not None:
            on_iteration(n_iter, flat, new.labels, sq.astype(X.dtype, copy=False))
        same = np.array_equal(new.labels, step.labels)
        step = new
        if same:
            converged = True
            break
        if cycle is not None and cycle.at_end(n_iter, flat):
            n_iter = max_iter
            break
    return (flat.reshape(Z, k, d), step.labels, sq.astype(X.dtype, copy=False), n_iter,
            converged)


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


def _fits_device_major(federation: Federation, X: np.ndarray) -> bool:
    """Whether Lloyd should run device by device (every device's rows fit in a core's cache,
    and there are enough devices to keep every thread busy) rather than in lock-step."""
    sizes = np.diff(federation.offsets)
    if not len(sizes):
        return False
    threads = numba.get_num_threads()
    largest = int(sizes.max())
    return (len(sizes) >= _DEVICES_PER_THREAD * threads
            and largest * X.shape[1] * X.itemsize <= _DEVICE_CACHE_BYTES
            and largest * _DEVICES_PER_THREAD * threads <= federation.n_samples)


def _lloyd_device_major(federation, X, centers, center_mask, max_iter, x_sq, weights):
    Z, k, d = centers.shape
    n = X.shape[0]
    mask = np.ones((Z, k), dtype=bool) if center_mask is None else np.asarray(center_mask, bool)
    compute_x_sq = x_sq is None
    x_sq = np.empty(n) if compute_x_sq else np.asarray(x_sq, dtype=np.float64)
    w = np.empty(0) if weights is None else np.asarray(weights, dtype=np.float64)
    labels = np.empty(n, dtype=np.int64)
    sq = np.empty(n, dtype=X.dtype)
    sums, totals = np.zeros((Z * k, d)), np.zeros(Z * k)
    n_iter, converged = np.zeros(Z, dtype=np.int64), np.zeros(Z, dtype=bool)
    with _single_threaded_blas():
        _local_lloyd_kernel(X, x_sq, compute_x_sq, w, weights is not None, centers,
                            _direct(k), mask,
                            federation.offsets, _BLOCK_ROWS, max_iter, labels, sq, sums, totals,
                            n_iter, converged)
    counts = np.bincount(federation.device_of_row * k + labels, minlength=Z * k).reshape(Z, k)
    return DeviceLloydResult(centers=centers, labels=labels, sq_distances=sq, counts=counts,
                             n_iter=int(n_iter.max(initial=0)), converged=bool(converged.all()),
                             totals=None if weights is None else totals.reshape(Z, k))


def _lloyd_by_device_kmedian(federation, X, centers, center_mask, max_iter, x_sq, weights):
    """k-median Lloyd on every device in lock-step: one assignment pass over the whole
    federation per iteration, then the Weiszfeld steps of all devices' centers at once (the
    segment of a row is ``device * k + label``)."""
    Z, k, _ = centers.shape
    base = federation.device_of_row * k
    centers, labels, sq, n_iter, converged = _kmedian_iterations(
        X, centers, _plan(federation.offsets), base, center_mask=center_mask, x_sq=x_sq,
        weights=weights, max_iter=max_iter)
    segment = base + labels
    counts = np.bincount(segment, minlength=Z * k).reshape(Z, k)
    totals = None if weights is None else \
        np.bincount(segment, weights=np.asarray(weights, dtype=np.float64),
                    minlength=Z * k).reshape(Z, k)
    return DeviceLloydResult(centers=centers, labels=labels, sq_distances=sq, counts=counts,
                             n_iter=n_iter, converged=converged, totals=totals)


def lloyd_by_device(federation: Federation, init: np.ndarray, *,
                    center_mask: np.ndarray | None = None, max_iter: int = 300,
                    x_sq: np.ndarray | None = None,
                    weights: np.ndarray | None = None,
                    objective: str = "kmeans") -> DeviceLloydResult:
    """Lloyd's algorithm run independently on every device, all devices in one call.

    When every device is small enough for its rows to stay in a core's cache (and there are
    enough devices to share among the threads), each thread runs its devices one after the
    other to convergence; otherwise all devices advance in lock-step, one pass of the kernel
    over the whole federation per iteration. Both give the same labels and the same centers up
    to rounding (a device that the lock-step splits over threads adds its partial sums in
    another order).

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
    objective : {"kmeans", "kmedian"}, default="kmeans"
        ``"kmedian"``: every device runs :func:`lloyd`'s k-median iterations (Weiszfeld
        updates, :func:`update_medians`), always in lock-step; ``sq_distances`` stay squared.
    """
    _check_objective(objective)
    X = _floating(federation.X)
    if weights is None:
        weights = federation.weights
    Z, k, _ = init.shape
    centers = np.array(init, dtype=X.dtype, copy=True)
    if objective == "kmedian":
        return _lloyd_by_device_kmedian(federation, X, centers, center_mask, max_iter, x_sq,
                                        weights)
    if _fits_device_major(federation, X):
        return _lloyd_device_major(federation, X, centers, center_mask, max_iter, x_sq, weights)
    plan = _plan(federation.offsets)
    step = _run_pass(X, x_sq, centers, plan, center_mask=center_mask, weights=weights, sums=True)
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is kept after the loop)
        centers = _means(step.sums, step.totals, centers)
        new = _run_pass(X, step.x_sq, centers, plan, center_mask=center_mask, weights=weights,
                        sums=True)
        same = np.array_equal(new.labels, step.labels)
        step = new
        if same:
            converged = True
            break
    segment = federation.device_of_row * k + step.labels
    counts = np.bincount(segment, minlength=Z * k).reshape(Z, k)
    totals = None if weights is None else step.totals.reshape(Z, k)
    return DeviceLloydResult(centers=centers, labels=step.labels, sq_distances=step.sq,
                             counts=counts, n_iter=n_iter, converged=converged, totals=totals)

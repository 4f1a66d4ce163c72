"""LocalKMeans: Lloyd's algorithm with distributed local iterations (Vardhan, Zhu, Ghosh &
Mazumdar, "LocalKMeans: Convergence of Lloyd's Algorithm with Distributed Local Iterations",
2025). Every machine runs Lloyd steps on its own data, and every ``L`` iterations the server
replaces their centers by the size-weighted aggregate. :class:`LocalKMeans` is the estimator and
:func:`local_lloyd_steps` a machine's steps between two aggregations. The algorithm and its
initialization: docs/algorithms.md, *LocalKMeans*.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..communication import SERVER
from ..lloyd import assign, lloyd_step_by_device, squared_norms, squared_shift
from ..rounds import RoundState, aggregate_centers, round_history
from ..seeding import SEEDINGS, initial_centers
from ._base import POSITIVE_INT, TOL, FederatedClusteringMixin, data_tolerance, warn_not_converged

__all__ = ["LocalKMeans", "local_lloyd_steps"]


def local_lloyd_steps(federation, centers: np.ndarray, n_steps: int, *, x_sq=None):
    """``n_steps`` local Lloyd steps on every machine from the same ``centers``: what each
    machine of :class:`LocalKMeans` runs between two aggregations, one pass of the shared
    kernel (:func:`fedclust.lloyd.lloyd_step_by_device`) per step, as ``fit`` runs them.

    Returns
    -------
    machine_centers : ndarray of shape (n_devices, k, d)
    totals : ndarray of shape (n_devices, k)
        Every machine's cluster weights (counts when unweighted) in its last step: the
        weights of the size-weighted aggregate.
    """
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1; got {n_steps}")
    machine_centers = np.repeat(np.asarray(centers)[None], federation.n_devices, axis=0)
    x_sq = squared_norms(federation.X) if x_sq is None else x_sq
    for _ in range(n_steps):
        _, _, machine_centers, totals = lloyd_step_by_device(
            federation, machine_centers, weights=federation.weights, x_sq=x_sq)
    return machine_centers, totals


class LocalKMeans(FederatedClusteringMixin):
    """Lloyd's algorithm with ``L`` local steps between size-weighted aggregations.

    Parameters
    ----------
    n_clusters : int, default=8
        ``K``.
    local_steps : int or None, default=1
        ``L``: local Lloyd steps between two aggregations. ``1`` is centralized Lloyd; ``None``
        never aggregates (the "Lloyd without aggregation" baseline).
    n_iter : int or None, default=None
        ``T``: Lloyd iterations in all (local steps on every machine), the paper's fixed
        budget; ``tol`` and ``max_iter`` then play no part. None (not in the paper): iterate
        until converged (``tol``), at most ``max_iter`` iterations.
    max_iter : int, default=300
        Iterations at most when ``n_iter`` is None; a fit that reaches it before converging
        warns (``ConvergenceWarning``).
    tol : float, default=1e-4
        With ``n_iter=None``: convergence when an aggregation moves the global centers by at
        most ``tol`` times the mean feature variance in all (the sum of their squared shifts
        since the previous aggregation, as scikit-learn's ``KMeans``), or leaves them
        unchanged (``tol=0``); with ``local_steps=None``, when a local step moves every
        machine's centers that little. The variance costs ``d + 2`` floats up from every
        machine, once (kind ``data_moments``).
    init : {"greedy-k-means++", "k-means++", "random"} or ndarray, default="greedy-k-means++"
        ``"greedy-k-means++"`` is scikit-learn's seeding (``KMeans``' default) run without
        moving data (LocalKMeans++ with greedy trials; not in the paper);
        ``"k-means++"`` is LocalKMeans++ (exact distributed k-means++, Algorithm 2);
        ``"random"`` draws ``K`` points uniformly; an array of shape (n_clusters, n_features)
        is used as given (e.g. perturbed true centers). Unweighted rows are drawn as rows of
        weight 1: ``sample_weight=None`` and ``np.ones(n)`` fit the same model from the same
        seed.
    random_state : int, Generator or None, default=None

    Notes
    -----
    No ``n_init``: a restart costs a whole fit's communication, where ``KMeans``' restarts
    are free; the greedy seeding gives ``KMeans(n_init=1)``'s quality
    (``benchmarks/results/defaults.md``).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The last aggregate; when the last iteration is not an aggregation (``T`` not a multiple
        of ``L``, or no aggregation) the machines' final centers are aggregated once more, in a
        final upload that ``communication_`` counts.
    labels_ : ndarray of shape (n_samples,)
        Nearest center of ``cluster_centers_`` for every training row (``predict(X)``).
    machine_labels_ : ndarray of shape (n_samples,)
        Each row's cluster under its own machine's final centers (what the machines hold
        after the last iteration; the paper's misclustering is measured on these).
    machine_centers_ : ndarray of shape (n_machines, n_clusters, n_features)
        Every machine's centers after the last iteration (before the final aggregate).
    inertia_ : float
        (Weighted) k-means cost of the training rows under ``cluster_centers_``.
    n_iter_ : int
        Iterations run: ``T``, or until convergence with ``n_iter=None``.
    converged_ : bool
        With ``n_iter=None``, whether the convergence test held before ``max_iter``; with a
        fixed ``T``, whether the last aggregation left the global centers unchanged (a fixed
        point of the iteration).
    n_machines_ : int
    history_ : dict of ndarray
        One row per iteration ``t = 1..T`` (:func:`fedclust.rounds.round_history`; a
        ``callback`` also sees the initialization as round 0): ``round``, ``aggregated``
        (whether iteration ``t`` ended with an aggregation), ``participants`` (``M`` in an
        aggregation, else 0), ``objective`` (k-means cost of every row to its machine's
        current centers) and ``global_objective`` (k-means cost of all rows under the
        size-weighted aggregate of the machines' current centers -- the global model the
        server would hold if it synchronized at ``t``). Pass a ``callback`` to ``fit`` (e.g.
        :class:`fedclust.rounds.History`) to evaluate each iteration's labels.
    communication_ : Communication
        Seeding, the broadcast of the initial centers (``K d`` floats to every machine), and
        per aggregation ``K d`` floats and ``K`` integers up from every machine (local
        centers and sizes; weight totals, floats, with sample weights) and ``K d`` floats down.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import LocalKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.1, (40, 2)), rng.normal(5, 0.1, (40, 2))]
    >>> km = LocalKMeans(2, local_steps=3, n_iter=6, random_state=0)
    >>> km = km.fit(X, devices=np.arange(80) % 4)
    >>> km.history_["round"][km.history_["aggregated"]].tolist()
    [3, 6]
    >>> kinds = km.communication_.by_kind().set_index("kind")
    >>> int(kinds.loc["local_centers", "floats"])  # 2 aggregations x 4 machines x K d = 4
    32
    """

    _reports_rounds = True

    _parameter_constraints: dict = {
        **FederatedClusteringMixin._parameter_constraints,
        "local_steps": [POSITIVE_INT, None],
        "n_iter": [POSITIVE_INT, None],
        "max_iter": [POSITIVE_INT],
        "tol": [TOL],
        "init": [StrOptions(set(SEEDINGS)), "array-like"],
    }

    def __init__(self, n_clusters=8, local_steps=1, *, n_iter=None, max_iter=300, tol=1e-4,
                 init="greedy-k-means++", random_state=None):
        self.n_clusters = n_clusters
        self.local_steps = local_steps
        self.n_iter = n_iter
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.random_state = random_state

    def _fit(self, federation, rng, comm, callback):
        X, w = federation.X, federation.weights
        Z, k, d = federation.n_devices, self.n_clusters, federation.n_features
        L = self.local_steps
        until_converged = self.n_iter is None
        T = self.max_iter if until_converged else self.n_iter
        machines = np.arange(Z)
        counts = {"ints": k} if w is None else {"floats": k}

        global_centers = initial_centers(self.init, federation, k, rng, comm)
        comm.note("seeding_rounds", comm["rounds"])
        tol = data_tolerance(federation, self.tol if until_converged else None, comm)
        comm.send("centers", SERVER, machines, floats=k * d)
        comm.add_rounds(1)
        machine_centers = np.repeat(global_centers[None], Z, axis=0)
        x_sq = squared_norms(X)
        row_w = federation.row_weights

        history = round_history(T, objective=float, global_objective=float)

        def record(t, labels, sq, synchronized, virtual_centers):
            objective = float(sq @ row_w)
            # synchronized: the machines hold the global centers, whose objective is theirs
            global_objective = objective if synchronized else \
                float(assign(X, virtual_centers, x_sq=x_sq)[1] @ row_w)
            if t > 0:  # t = 0 is the initialization, not a round
                history["objective"][t - 1] = objective
                history["global_objective"][t - 1] = global_objective
            if callback is not None:
                callback(RoundState(
                    round=t, centers=global_centers if synchronized else virtual_centers,
                    aggregated=t > 0 and synchronized,
                    objective=objective, global_objective=global_objective,
                    device_centers=machine_centers, participants=machines,
                    sorted_labels=labels, order=federation.order))

        # every pass assigns the rows to their machine's centers and sums them for the next
        # local Lloyd step: one pass over the data per iteration
        labels, sq, next_centers, next_totals = lloyd_step_by_device(
            federation, machine_centers, weights=w, x_sq=x_sq)
        record(0, labels, sq, True, None)
        converged = False
        t = 0
        for t in range(1, T + 1):  # noqa: B007 (the count is kept after the loop)
            # one local Lloyd step on every machine, from its current centers
            before = machine_centers
            machine_centers, totals = next_centers, next_totals
            synchronized = L is not None and t % L == 0
            virtual = None
            if L is None:
                # no aggregation: converged when no machine's centers move (tol: by little)
                converged = _moved_at_most(before, machine_centers, tol)
            if synchronized:
                # size-weighted aggregate, broadcast to every machine
                previous = global_centers
                global_centers, _ = aggregate_centers(machine_centers, totals, global_centers)
                converged = _moved_at_most(previous, global_centers, tol)
                machine_centers[:] = global_centers
                history["aggregated"][t - 1] = True
                history["participants"][t - 1] = Z
                comm.send("local_centers", machines, SERVER, floats=k * d)
                comm.send("local_counts", machines, SERVER, **counts)
                comm.send("centers", SERVER, machines, floats=k * d)
                comm.add_rounds(1)
            else:
                virtual, _ = aggregate_centers(machine_centers, totals, global_centers)
            labels, sq, next_centers, next_totals = lloyd_step_by_device(
                federation, machine_centers, weights=w, x_sq=x_sq)
            record(t, labels, sq, synchronized, virtual)
            if until_converged and converged:
                break

        T = t
        history = {name: column[:T] for name, column in history.items()}
        self.machine_centers_ = machine_centers.copy()
        if not history["aggregated"][T - 1]:
            # the final aggregate the estimator reports needs one more upload
            global_centers, _ = aggregate_centers(machine_centers, totals, global_centers)
            comm.send("local_centers", machines, SERVER, floats=k * d)
            comm.send("local_counts", machines, SERVER, **counts)
        self.cluster_centers_ = global_centers
        self.machine_labels_ = federation.to_original_order(labels)
        self.labels_ = federation.to_original_order(assign(X, global_centers, x_sq=x_sq)[0])
        self.history_ = history
        self.n_iter_ = T
        self.converged_ = bool(converged)
        self.n_machines_ = Z
        if until_converged and not converged:
            warn_not_converged(self, "max_iter", self.max_iter)


def _moved_at_most(previous: np.ndarray, centers: np.ndarray, tol: float) -> bool:
    """Whether ``centers`` moved from ``previous`` by at most ``tol`` in all (the sum of the
    squared shifts, in float64); with ``tol = 0``, whether they are the same."""
    if tol <= 0:
        return bool(np.array_equal(previous, centers))
    return squared_shift(previous, centers) <= tol

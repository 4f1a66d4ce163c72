"""Centralized (weighted) k-means or k-median on data one machine holds whole:
:func:`best_kmeans`, the best of several seeding + Lloyd restarts, which is also the weighted
solve every node of a distributed coreset runs on the coreset, and :func:`reference_kmeans`, the
centralized reference every experiment compares with (k-FED's oracle clusterings, the
comparison's pooled clustering).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_choice
from .lloyd import LloydResult, lloyd
from .progress import progress
from .seeding import kmeans_plusplus
from .seeds import seed_for

__all__ = ["best_kmeans", "reference_kmeans"]


def best_kmeans(X, n_clusters: int, seeds, *, sample_weight=None,
                max_iter: int = 300, objective: str = "kmeans",
                algorithm: str = "lloyd", seeding: str = "kmeans++",
                desc: str | None = None, tol: float = 0.0) -> LloydResult:
    """Lowest-cost Lloyd run over one k-means++ restart per seed.

    What a single machine runs on data it holds whole: the centralized reference, and the
    weighted solve every node of a distributed coreset runs on the coreset (Balcan, Ehrlich &
    Liang 2013, Algorithm 2: "an alpha-approximation algorithm for weighted clustering
    instances"). One restart is weighted k-means++ (rows of weight <= 0 are never drawn)
    followed by weighted Lloyd to convergence; the restart of lowest weighted cost is kept. For
    k-median (``objective="kmedian"``) the seeding draws proportional to ``w D`` rather than
    ``w D^2`` and Lloyd's update moves the centers towards their clusters' geometric medians
    (:func:`fedclust.lloyd.lloyd`). ``seeding="greedy"`` draws scikit-learn's greedy k-means++
    instead (``2 + ln k`` candidates per center, the one of lowest potential kept): what a
    user's ``KMeans`` starts from.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_clusters : int
    seeds : sequence of int, Generator or None
        One restart per entry, each seeded with it (so a restart's result does not depend on
        how many others run).
    sample_weight : ndarray of shape (n,), optional
        Row weights; negative ones allowed (see docs/algorithms.md).
    max_iter : int
    objective : {"kmeans", "kmedian"}, default="kmeans"
        ``"kmedian"``: ``D`` seeding (``power=1``), k-median Lloyd, and the restart of lowest
        weighted k-median cost ``sum_i w_i ||x_i - c(x_i)||`` is kept.
    algorithm : {"lloyd", "elkan"}, default="lloyd"
        The assignment step of every Lloyd run (:func:`fedclust.lloyd.lloyd`; ``"elkan"`` is
        k-means only).
    seeding : {"kmeans++", "greedy"}, default="kmeans++"
        ``"kmeans++"``: k-means++ as Arthur & Vassilvitskii draw it
        (:func:`fedclust.seeding.kmeans_plusplus`); ``"greedy"``: scikit-learn's greedy
        k-means++ (:func:`sklearn.cluster.kmeans_plusplus`; k-means only), which draws no row
        of weight <= 0 (negative weights count as 0 in the seeding, as they do in
        :mod:`fedclust.seeding`).
    desc : str, optional
        Show progress over the restarts under this name (:func:`fedclust.progress.progress`:
        log lines in a job, with a heartbeat while a restart runs); None shows none.
    tol : float, default=0.0
        :func:`fedclust.lloyd.lloyd`'s absolute tolerance (k-means; 0: until no label
        changes).

    Returns
    -------
    LloydResult
        Its ``inertia`` is the cost of the objective.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.2], [10.0], [10.2]])
    >>> result = best_kmeans(X, 2, seeds=[0, 1])
    >>> sorted(result.centers.ravel().round(1).tolist())
    [0.1, 10.1]
    >>> square = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [10.0, 10.0]])
    >>> X = np.r_[square, square + 100]  # geometric medians (1, 1) and (101, 101), means 3 off
    >>> result = best_kmeans(X, 2, seeds=[0, 1], objective="kmedian")
    >>> sorted(result.centers.round(1).tolist())
    [[1.0, 1.0], [101.0, 101.0]]
    """
    check_choice(objective, "objective", {"kmeans", "kmedian"})
    check_choice(seeding, "seeding", {"kmeans++", "greedy"})
    if seeding == "greedy" and objective != "kmeans":
        raise ValueError(f"seeding='greedy' is k-means++'s greedy variant; objective="
                         f"{objective!r} needs seeding='kmeans++'")
    power = 2 if objective == "kmeans" else 1
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must hold at least one seed (one restart each)")
    best = None
    drawable = X.shape[0] if sample_weight is None else int((np.asarray(sample_weight) > 0).sum())
    for seed in progress(seeds, desc=desc or "", disable=desc is None, unit="restart"):
        # scikit-learn's seeding needs n_clusters rows to draw; fewer: the seeding that repeats
        if seeding == "greedy" and drawable >= n_clusters:
            from sklearn.cluster import kmeans_plusplus as greedy_kmeans_plusplus

            drawing = None if sample_weight is None else np.maximum(sample_weight, 0.0)
            # scikit-learn takes integer seeds below 2**32 only (smaller ones unchanged)
            state = int(seed) % 2**32 if isinstance(seed, (int, np.integer)) else seed
            init, _ = greedy_kmeans_plusplus(X, n_clusters, sample_weight=drawing,
                                             random_state=state)
        else:
            init, _ = kmeans_plusplus(X, n_clusters, sample_weight=sample_weight,
                                      random_state=seed, power=power)
        result = lloyd(X, init, weights=sample_weight, max_iter=max_iter, objective=objective,
                       algorithm=algorithm, tol=tol)
        if best is None or result.inertia < best.inertia:
            best = result
    return best


def reference_kmeans(X, n_clusters: int, *, seed: int, n_init: int = 1,
                     max_iter: int = 300, desc: str | None = None) -> LloydResult:
    """The centralized reference: k-means on all of ``X``, best of ``n_init`` restarts (k-FED's
    oracle clusterings, the comparison's pooled clustering): :func:`best_kmeans` with greedy
    seeding.

    Each restart is greedy k-means++ (scikit-learn's, what a user's ``KMeans`` starts from)
    and Lloyd to convergence with the shared kernel; restart ``r`` is seeded
    ``seed_for(seed, "restart=r")``, so a restart's result does not depend on how many run.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_clusters : int
    seed : int
    n_init : int, default=1
    max_iter : int, default=300
    desc : str, optional
        Show progress over the restarts under this name (see :func:`best_kmeans`).

    Returns
    -------
    LloydResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.2], [10.0], [10.2]])
    >>> reference = reference_kmeans(X, 2, seed=0, n_init=2)
    >>> sorted(reference.centers.ravel().round(1).tolist()), round(reference.inertia, 2)
    ([0.1, 10.1], 0.04)
    """
    seeds = [seed_for(seed, f"restart={restart}") for restart in range(int(n_init))]
    return best_kmeans(X, n_clusters, seeds, max_iter=max_iter, seeding="greedy", desc=desc)

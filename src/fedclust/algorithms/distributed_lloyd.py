"""Naive distributed k-means: Lloyd's algorithm with one communication round per iteration.

The baseline k-FED is compared with (Dennis, Li & Smith, ICML 2021, Sec. 4.2.1, Fig. 3): in
every round the server broadcasts the ``k`` current centers, every device assigns its points to
them and sends back, per cluster, the sum of its points and their number, and the server sets
every center to the pooled mean. This is exactly centralized Lloyd on the pooled data, so the
pooled computation below is the same arithmetic; only the communication is federated.
"""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from ..rounds import RoundState, round_history
from ..seeding import SEEDINGS, initial_centers
from ._base import (
    POSITIVE_INT,
    TOL,
    FederatedClusteringMixin,
    data_tolerance,
    lloyd_rounds,
    warn_not_converged,
)

__all__ = ["DistributedLloyd"]


class DistributedLloyd(FederatedClusteringMixin):
    """Lloyd's algorithm over a federation, one round per iteration, run to convergence.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {"greedy-k-means++", "k-means++", "random"} or ndarray, default="greedy-k-means++"
        ``"greedy-k-means++"`` is scikit-learn's seeding (``KMeans``' default) over the
        federation (:func:`~fedclust.seeding.distributed_greedy_kmeans_plusplus`, ``2 k + 1``
        rounds); ``"k-means++"`` exact (weighted) k-means++
        (:func:`~fedclust.seeding.distributed_kmeans_plusplus`, two rounds per center);
        ``"random"`` draws ``n_clusters`` points (two rounds); an array of shape
        (n_clusters, n_features) is taken as given (no seeding communication). Unweighted
        rows are drawn as rows of weight 1: ``sample_weight=None`` and ``np.ones(n)`` fit
        the same model from the same seed.
    max_iter : int, default=300
        Lloyd iterations at most; a fit that reaches it before converging warns
        (``ConvergenceWarning``).
    tol : float, default=1e-4
        Convergence when no label changes, or when an update moves the centers by at most
        ``tol`` times the mean feature variance in all (the sum of their squared shifts, as
        scikit-learn's ``KMeans``); ``0``: only when no label changes. The variance costs
        ``d + 2`` floats up from every device, once (kind ``data_moments``).
    random_state : int, Generator or None, default=None

    Notes
    -----
    No ``n_init``: a restart costs a whole fit's communication, rounds and floats, where
    ``KMeans``' restarts are free; the greedy seeding gives ``KMeans(n_init=1)``'s quality
    (``benchmarks/results/defaults.md``). Fit several ``random_state`` values and keep the
    lowest ``inertia_`` where the communication is affordable.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
        Nearest center of every training row (``predict(X)``).
    inertia_ : float
        (Weighted) k-means cost of the training data.
    n_iter_ : int
        Lloyd iterations (center updates) run.
    n_features_in_ : int
    converged_ : bool
    communication_ : Communication
        Seeding plus Lloyd rounds. A Lloyd round sends ``k d`` floats down to every device
        (kind ``centers``) and ``k d`` floats plus ``k`` integers up from every device
        (``cluster_sums`` and ``cluster_counts``; with sample weights the counts are weight
        totals, floats). Convergence is detected by the server when a round leaves every
        center unchanged, so a run that converges after ``n_iter_`` updates uses
        ``n_iter_ + 1`` rounds (convergence by ``tol``: ``n_iter_``, the server sees the
        shift when it updates); a run stopped by ``max_iter`` uses ``max_iter`` rounds and one
        last broadcast of the final centers. ``seeding_rounds`` and ``lloyd_rounds`` split
        ``rounds``.
    history_ : dict of ndarray
        One row per Lloyd round ``t = 1..lloyd_rounds`` (:func:`fedclust.rounds.round_history`;
        seeding rounds are in ``communication_``): ``round``, ``aggregated`` (always True: the
        server sums every device's cluster sums) and ``participants`` (every device).

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import DistributedLloyd
    >>> X = np.r_[np.zeros((10, 2)), np.full((10, 2), 5.0)]
    >>> km = DistributedLloyd(2, random_state=0).fit(X, devices=np.arange(20) % 4)
    >>> sorted(km.cluster_centers_[:, 0].tolist()), km.communication_["lloyd_rounds"]
    ([0.0, 5.0], 1)
    """

    _reports_rounds = True

    _parameter_constraints: dict = {
        **FederatedClusteringMixin._parameter_constraints,
        "init": [StrOptions(set(SEEDINGS)), "array-like"],
        "max_iter": [POSITIVE_INT],
        "tol": [TOL],
    }

    def __init__(self, n_clusters=8, *, init="greedy-k-means++", max_iter=300, tol=1e-4,
                 random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, federation, rng, comm, callback):
        init = initial_centers(self.init, federation, self.n_clusters, rng, comm)
        seeding_rounds = comm["rounds"]
        tol = data_tolerance(federation, self.tol, comm)
        report = None
        if callback is not None:
            w = federation.row_weights

            def report(t, centers, labels, sq):
                # round t: the devices assigned their points to the centers of round t
                cost = float(sq @ w)
                callback(RoundState(round=t, centers=centers, aggregated=t > 0, objective=cost,
                                    global_objective=cost, sorted_labels=labels,
                                    order=federation.order))

        result, rounds = lloyd_rounds(federation, init, max_iter=self.max_iter, tol=tol,
                                      comm=comm, on_iteration=report)
        Z = federation.n_devices
        comm.note("seeding_rounds", seeding_rounds)
        comm.note("lloyd_rounds", rounds)
        history = round_history(rounds)
        history["aggregated"][:] = True
        history["participants"][:] = Z
        self.history_ = history

        self.cluster_centers_ = result.centers
        self.labels_ = federation.to_original_order(result.labels)
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        if not result.converged:
            warn_not_converged(self, "max_iter", self.max_iter)

"""Naive distributed k-means: Lloyd's algorithm with one communication round per iteration.

The baseline k-FED is compared with (Dennis, Li & Smith, ICML 2021, Sec. 4.2.1, Fig. 3): in
every round the server broadcasts the ``k`` current centers, every device assigns its points to
them and sends back, per cluster, the sum of its points and their number, and the server sets
every center to the pooled mean. This is exactly centralized Lloyd on the pooled data, so the
pooled computation below is the same arithmetic; only the communication is federated.
"""

from __future__ import annotations

from .._validation import check_int, check_random_state
from ..federation import Federation
from ..lloyd import lloyd
from ._base import FederatedClusteringMixin
from ._seeding import initial_centers

__all__ = ["DistributedLloyd"]


class DistributedLloyd(FederatedClusteringMixin):
    """Lloyd's algorithm over a federation, one round per iteration, run to convergence.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {"k-means++", "random"} or ndarray of shape (n_clusters, n_features), default="k-means++"
        ``"k-means++"`` is exact k-means++ over the federation
        (:func:`~fedclust.algorithms._seeding.distributed_kmeans_plusplus`, two rounds per
        center); ``"random"`` draws ``n_clusters`` points uniformly (two rounds); an array is
        taken as given (no seeding communication).
    max_iter : int, default=300
        Lloyd iterations at most.
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        k-means cost of the training data.
    n_iter_ : int
        Lloyd iterations (center updates) run.
    converged_ : bool
    communication_ : Communication
        Seeding plus Lloyd rounds. A Lloyd round costs ``Z k d`` floats down (the centers to
        every device) and ``Z (k d + k)`` up (per-cluster sums and counts). Convergence is
        detected by the server when a round leaves every center unchanged, so a run that
        converges after ``n_iter_`` updates uses ``n_iter_ + 1`` rounds; a run stopped by
        ``max_iter`` uses ``max_iter`` rounds and one last broadcast of the final centers.
        ``seeding_rounds`` records the seeding's share of ``rounds``.
    """

    def __init__(self, n_clusters=8, *, init="k-means++", max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, devices):
        """Run distributed Lloyd on the federation given by ``X`` and ``devices``."""
        check_int(self.n_clusters, "n_clusters", low=1)
        check_int(self.max_iter, "max_iter", low=1)
        federation = Federation.from_devices(X, devices)
        rng = check_random_state(self.random_state)
        init, comm = initial_centers(self.init, federation, self.n_clusters, rng)
        seeding_rounds = comm["rounds"]
        result = lloyd(federation.X, init, max_iter=self.max_iter)

        Z, k, d = federation.n_devices, self.n_clusters, federation.n_features
        rounds = result.n_iter + 1 if result.converged else result.n_iter
        for _ in range(rounds):
            comm.add_round(up_floats=Z * (k * d + k), down_floats=Z * k * d, up_messages=Z,
                           down_messages=Z)
        if not result.converged:
            comm["floats_down"] += Z * k * d
            comm["messages_down"] += Z
        comm["seeding_rounds"] = seeding_rounds

        self.cluster_centers_ = result.centers
        self.labels_ = federation.to_original_order(result.labels)
        self.inertia_ = result.inertia
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.communication_ = comm
        return self

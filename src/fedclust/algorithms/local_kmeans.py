"""LocalKMeans: Lloyd's algorithm with distributed local iterations.

(Vardhan, Zhu, Ghosh & Mazumdar, "LocalKMeans: Convergence of Lloyd's Algorithm with
Distributed Local Iterations", 2025.) ``M`` machines start from the same global centers. Every
iteration, each machine runs one Lloyd step on its own data from its current centers; every
``L`` iterations the server replaces every machine's centers by their aggregate, each cluster's
center averaged over machines with weights equal to the machines' local cluster sizes; ``T``
iterations in all. With ``L = 1`` the aggregate of the local means is the pooled mean, so
LocalKMeans is exactly centralized Lloyd; with no aggregation the machines never communicate.

Initialization is LocalKMeans++ (the paper's Algorithm 2): k-means++ run without moving data,
whose output has the distribution of centralized k-means++
(:func:`~fedclust.algorithms._seeding.distributed_kmeans_plusplus`), or any given centers (the
synthetic experiments perturb the true centers).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_random_state
from ..federation import Federation
from ..lloyd import assign, assign_by_device, squared_norms, update_centers
from ..metrics import misclustering_by_group, misclustering_rate
from ._base import FederatedClusteringMixin
from ._seeding import initial_centers

__all__ = ["LocalKMeans"]


class LocalKMeans(FederatedClusteringMixin):
    """Lloyd's algorithm with ``L`` local steps between size-weighted aggregations.

    Parameters
    ----------
    n_clusters : int, default=8
        ``K``.
    local_steps : int or None, default=1
        ``L``: local Lloyd steps between two aggregations. ``1`` is centralized Lloyd; ``None``
        never aggregates (the "Lloyd without aggregation" baseline).
    n_iter : int, default=20
        ``T``: Lloyd iterations in all (local steps on every machine).
    init : {"k-means++", "random"} or ndarray of shape (n_clusters, n_features)
        ``"k-means++"`` is LocalKMeans++ (exact distributed k-means++, Algorithm 2);
        ``"random"`` draws ``K`` points uniformly; an array is used as given (e.g. perturbed
        true centers).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The last aggregate; when the last iteration is not an aggregation (``T`` not a multiple
        of ``L``, or no aggregation) the machines' final centers are aggregated once more, in a
        final upload that ``communication_`` counts.
    labels_ : ndarray of shape (n_samples,)
        Each row's cluster under its machine's final centers.
    machine_centers_ : ndarray of shape (n_machines, n_clusters, n_features)
        Every machine's centers after the last iteration (before the final aggregate).
    history_ : dict of ndarray
        Indexed by iteration ``t = 0..T`` (``t = 0`` is the initialization): ``iteration``,
        ``objective`` (k-means cost of every row to its machine's current centers),
        ``global_objective`` (k-means cost of all rows under the size-weighted aggregate of the
        machines' current centers -- the global model the server would hold if it synchronized
        at ``t``), ``aggregated`` (whether iteration ``t`` ended with an aggregation) and, when
        ``fit``
        received ``y_true``, ``misclustering`` (whole federation, one permutation of the labels)
        and ``machine_misclustering`` of shape ``(T + 1, n_machines)`` (each machine with its
        own best permutation).
    communication_ : Communication
        Seeding, the broadcast of the initial centers (``M K d`` floats down), and per
        aggregation ``M (K d + K)`` floats up (local centers and sizes) and ``M K d`` down.
    """

    def __init__(self, n_clusters=8, local_steps=1, *, n_iter=20, init="k-means++",
                 random_state=None):
        self.n_clusters = n_clusters
        self.local_steps = local_steps
        self.n_iter = n_iter
        self.init = init
        self.random_state = random_state

    def _check_params(self):
        check_int(self.n_clusters, "n_clusters", low=1)
        if self.local_steps is not None:
            check_int(self.local_steps, "local_steps", low=1)
        check_int(self.n_iter, "n_iter", low=1)

    @staticmethod
    def _aggregate(machine_centers, sizes, previous):
        """Each cluster's center averaged over machines, weighted by local cluster sizes; a
        cluster empty on every machine keeps its previous global center."""
        totals = sizes.sum(axis=0)
        weighted = np.einsum("mk,mkd->kd", sizes, machine_centers)
        out = previous.copy()
        nonempty = totals > 0
        out[nonempty] = weighted[nonempty] / totals[nonempty, None]
        return out

    def fit(self, X, devices, y_true=None):
        """Run LocalKMeans on the federation given by ``X`` and the machine of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        devices : array-like of int, shape (n_samples,)
            The machine of each row.
        y_true : array-like of shape (n_samples,), optional
            Reference labels, used only to record ``history_["misclustering"]`` at every
            iteration; the algorithm never reads them.
        """
        self._check_params()
        federation = Federation.from_devices(X, devices)
        rng = check_random_state(self.random_state)
        Z, k, d = federation.n_devices, self.n_clusters, federation.n_features
        L, T = self.local_steps, self.n_iter
        truth = None
        if y_true is not None:
            y_true = np.asarray(y_true)
            if y_true.shape != (federation.n_samples,):
                raise ValueError(f"y_true must have shape ({federation.n_samples},); got "
                                 f"{y_true.shape}")
            truth = y_true[federation.order]
        machine_of_row = federation.device_of_row

        global_centers, comm = initial_centers(self.init, federation, self.n_clusters, rng)
        seeding_rounds = comm["rounds"]
        comm.add_round(up_floats=0, down_floats=Z * k * d, up_messages=0, down_messages=Z)
        machine_centers = np.repeat(global_centers[None], Z, axis=0)
        x_sq = squared_norms(federation.X)
        segments = machine_of_row * k

        history = {"iteration": np.arange(T + 1), "objective": np.empty(T + 1),
                   "global_objective": np.empty(T + 1),
                   "aggregated": np.zeros(T + 1, dtype=bool)}
        if truth is not None:
            history["misclustering"] = np.empty(T + 1)
            history["machine_misclustering"] = np.empty((T + 1, Z))

        def record(t, labels, sq, virtual_centers=None):
            # virtual_centers=None: the machines hold the global centers (t = 0 or just
            # synchronized), so the global model's objective is the machines' own
            history["objective"][t] = sq.sum()
            history["global_objective"][t] = history["objective"][t] if virtual_centers is None \
                else assign(federation.X, virtual_centers, x_sq=x_sq)[1].sum()
            if truth is not None:
                history["misclustering"][t] = misclustering_rate(truth, labels)
                history["machine_misclustering"][t] = misclustering_by_group(
                    truth, labels, machine_of_row, Z)

        labels, sq = assign_by_device(federation, machine_centers, x_sq=x_sq)
        record(0, labels, sq)
        sizes = None
        for t in range(1, T + 1):
            # one local Lloyd step on every machine, from its current centers
            machine_centers, sizes = update_centers(federation.X, segments + labels,
                                                    machine_centers)
            if L is not None and t % L == 0:
                # synchronization: size-weighted aggregate, broadcast to every machine
                global_centers = self._aggregate(machine_centers, sizes, global_centers)
                machine_centers[:] = global_centers
                history["aggregated"][t] = True
                comm.add_round(up_floats=Z * (k * d + k), down_floats=Z * k * d, up_messages=Z,
                               down_messages=Z)
            labels, sq = assign_by_device(federation, machine_centers, x_sq=x_sq)
            record(t, labels, sq, None if history["aggregated"][t] else
                   self._aggregate(machine_centers, sizes, global_centers))

        self.machine_centers_ = machine_centers.copy()
        if not history["aggregated"][T]:
            # the final aggregate the estimator reports needs one more upload
            global_centers = self._aggregate(machine_centers, sizes, global_centers)
            comm["floats_up"] += Z * (k * d + k)
            comm["messages_up"] += Z
        comm["seeding_rounds"] = seeding_rounds
        self.cluster_centers_ = global_centers
        self.labels_ = federation.to_original_order(labels)
        self.history_ = history
        self.communication_ = comm
        self.n_machines_ = Z
        return self

"""k-FED: one-shot federated clustering (Dennis, Li & Smith, ICML 2021).

Every device clusters its own data into ``k'`` clusters with the spectral algorithm of Awasthi &
Sheffet (2012) (the paper's Algorithm 1) and sends its ``k'`` local centers to the server, once.
The server seeds ``k`` centers among all local centers by farthest-point traversal and runs one
round of Lloyd's algorithm on the set of local centers (Algorithm 2). Each point then takes the
cluster of its local center: the *induced clustering* (Definition 3.3).

Implementation notes (deviations and choices are stated where they apply):

* The constant-factor approximation of Algorithm 1, step 2 is k-means++ seeding
  (``sklearn.cluster.kmeans_plusplus``) in the projected space, as in the authors' code.
* ``theta_r`` (Algorithm 1, step 3) is the mean of the *original* points of ``S_r``, as Awasthi &
  Sheffet define it; the authors' code averages the projected points instead, which differs only
  by the component outside the top-``k'`` subspace.
* A device with at most ``k'`` points reports its points as its centers; a device with
  ``d <= k'`` skips the projection (the subspace is the whole space). A local cluster with an
  empty ``S_r`` starts Lloyd from its seed point, and a local cluster that ends empty is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.cluster import kmeans_plusplus
from sklearn.utils.extmath import randomized_svd
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_choice,
    check_devices,
    check_fraction,
    check_int,
    check_random_state,
    check_real,
)
from ..federation import Federation
from ..lloyd import assign, lloyd, lloyd_by_device, per_device_blas, segment_sums
from ._base import Communication, FederatedClusteringMixin

__all__ = ["KFed", "awasthi_sheffet", "farthest_point_seeding", "LocalClustering"]


@dataclass
class LocalClustering:
    """Result of Algorithm 1 on every device of a federation.

    Attributes
    ----------
    centers : ndarray of shape (n_devices, k', d)
        Local centers; rows where ``valid`` is False are padding.
    valid : ndarray of shape (n_devices, k') of bool
        True for a local cluster that holds at least one point.
    sizes : ndarray of shape (n_devices, k')
        Points in every local cluster.
    labels : ndarray of shape (n_samples,)
        Local cluster (``0..k'-1``) of every row, in the federation's sorted order.
    n_iter : int
        Lloyd update steps until every device reached its fixed point.
    """

    centers: np.ndarray
    valid: np.ndarray
    sizes: np.ndarray
    labels: np.ndarray
    n_iter: int


def _proximity_means(A, A_hat, nu, seed_points, ratio):
    """Algorithm 1, step 3 (Awasthi & Sheffet, step 2): keep the points ``ratio`` times closer to
    one seed than to every other, and average them.

    ``S_r = {i : ratio * ||A_hat_i - nu_r|| <= ||A_hat_i - nu_s|| for all s != r}`` and
    ``theta_r`` is the mean of ``A_i`` over ``S_r``; an empty ``S_r`` keeps its seed point.
    """
    k = nu.shape[0]
    dist = cdist(A_hat, nu)
    nearest = np.argmin(dist, axis=1)
    rows = np.arange(len(dist))
    closest = dist[rows, nearest]
    dist[rows, nearest] = np.inf
    keep = ratio * closest <= dist.min(axis=1)
    sums, counts = segment_sums(A[keep], nearest[keep], k)
    theta = seed_points.astype(np.float64, copy=True)
    filled = counts > 0
    theta[filled] = sums[filled] / counts[filled, None]
    return theta


def _seed_device(A, k, seed, ratio, projection):
    """Algorithm 1, steps 1-3 on one device: the starting centers of its local Lloyd run."""
    n, d = A.shape
    if n <= k:
        # at most k' points: every point is a cluster of its own
        return A.astype(np.float64, copy=True)
    if projection and d > k:
        # step 1: project onto the span of the top-k' right singular vectors of A
        _, _, vt = randomized_svd(A, n_components=k, random_state=seed)
        A_hat = A @ vt.T
    else:
        A_hat = A
    # step 2: a constant-factor approximation on the projected points (k-means++ seeding)
    nu, seed_rows = kmeans_plusplus(A_hat, k, random_state=seed)
    # step 3: proximity filter and means
    return _proximity_means(A, A_hat, nu, A[seed_rows], ratio)


def awasthi_sheffet(federation: Federation, device_clusters: int, *, random_state=None,
                    proximity_ratio: float = 3.0, projection: bool = True,
                    max_iter: int = 300) -> LocalClustering:
    """k-FED's Algorithm 1 run on every device of ``federation``.

    Steps 1-3 (projection, seeding, proximity filter) run per device; step 4, Lloyd's algorithm to
    convergence on the device's original data, runs on all devices at once through
    :func:`fedclust.lloyd.lloyd_by_device`.

    Parameters
    ----------
    federation : Federation
    device_clusters : int
        ``k'``, the number of clusters each device looks for.
    random_state : int, Generator or None
    proximity_ratio : float
        The factor of step 3 (3 in Awasthi & Sheffet).
    projection : bool
        Project onto the top-``k'`` singular subspace before seeding (step 1). Turning it off is
        an ablation, not the paper's algorithm.
    max_iter : int
        Lloyd update steps at most (step 4 runs "until convergence").
    """
    rng = check_random_state(random_state)
    k = device_clusters
    Z, d = federation.n_devices, federation.n_features
    seeds = rng.integers(0, 2**31 - 1, size=Z)
    init = np.zeros((Z, k, d), dtype=federation.X.dtype)
    valid = np.zeros((Z, k), dtype=bool)
    with per_device_blas(federation):
        for z in range(Z):
            theta = _seed_device(federation.device_data(z), k, int(seeds[z]), proximity_ratio,
                                 projection)
            init[z, :len(theta)] = theta
            valid[z, :len(theta)] = True
    result = lloyd_by_device(federation, init, center_mask=valid, max_iter=max_iter)
    return LocalClustering(centers=result.centers, valid=valid & (result.counts > 0),
                           sizes=result.counts, labels=result.labels, n_iter=result.n_iter)


def farthest_point_seeding(points: np.ndarray, first: np.ndarray, n_clusters: int) -> np.ndarray:
    """Algorithm 2, steps 2-3: start from the rows ``first`` and repeatedly add the row farthest
    from those chosen, until ``n_clusters`` rows are chosen.

    Returns
    -------
    chosen : ndarray of shape (n_clusters,)
        Row indices into ``points``; ``first`` comes first.
    """
    chosen = list(np.asarray(first, dtype=np.int64)[:n_clusters])
    _, min_sq = assign(points, points[chosen])
    while len(chosen) < n_clusters:
        far = int(np.argmax(min_sq))
        if min_sq[far] <= 0.0:
            raise ValueError(
                f"only {len(chosen)} distinct local centers reached the server; k-FED cannot form "
                f"n_clusters={n_clusters} clusters"
            )
        chosen.append(far)
        diff = points - points[far]
        min_sq = np.minimum(min_sq, np.einsum("ij,ij->i", diff, diff))
    return np.asarray(chosen, dtype=np.int64)


class KFed(FederatedClusteringMixin):
    """k-FED one-shot federated k-means (Dennis, Li & Smith, ICML 2021).

    Parameters
    ----------
    n_clusters : int, default=8
        ``k``, the number of clusters over the whole network.
    device_clusters : int, default=2
        ``k'``, the number of clusters each device finds locally (``k' <= k``; the paper's
        regime of interest is ``k' <= sqrt(k)``).
    server_lloyd_rounds : int, default=1
        Lloyd rounds the server runs on the local centers after farthest-point seeding.
        Algorithm 2 runs exactly one; larger values are an extension.
    server_weighting : {"uniform", "size"}, default="uniform"
        ``"uniform"`` clusters the set of local centers as in Algorithm 2; ``"size"`` weights
        each local center by its number of points (devices then also send the sizes).
    local_max_iter : int, default=300
        Lloyd update steps at most on each device (Algorithm 1 runs to convergence).
    proximity_ratio : float, default=3.0
        Factor of the proximity filter in Algorithm 1 (3 in Awasthi & Sheffet).
    local_projection : bool, default=True
        Project each device's data on its top-``k'`` singular subspace (Algorithm 1, step 1).
    participation : float, default=1.0
        Fraction of devices whose local centers reach the server; the others fail before
        sending, and their points are clustered afterwards like a new device's (Theorem 3.2).
    random_state : int, Generator or None, default=None
        Drives every random choice: the participating devices, the first device of the
        server's seeding and each device's SVD and k-means++.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
        The induced clustering (Definition 3.3): each row takes the global cluster of its local
        cluster.
    local_centers_ : ndarray of shape (n_local, n_features)
        Every non-empty local center of every device.
    local_center_devices_ : ndarray of shape (n_local,)
        Device id of each local center.
    local_center_sizes_ : ndarray of shape (n_local,)
    local_center_labels_ : ndarray of shape (n_local,)
        Global cluster of each local center.
    server_init_ : ndarray of shape (n_clusters, n_features)
        The server's farthest-point seeds (Algorithm 2, steps 2-3), before its Lloyd round.
    participating_devices_ : ndarray
        Ids of the devices whose centers reached the server.
    device_ids_ : ndarray
        Ids of all devices seen in ``fit``.
    n_iter_local_ : int
    communication_ : Communication
        One round: each participating device sends its local centers (``k' d`` floats, plus
        ``k'`` sizes with ``server_weighting="size"``); the server sends the ``k d`` global
        centers to every device.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import KFed
    >>> rng = np.random.default_rng(0)
    >>> centers = 20 * np.eye(4, 5)
    >>> labels = np.repeat(np.arange(4), 50)
    >>> X = centers[labels] + rng.standard_normal((200, 5))
    >>> devices = 2 * (labels // 2) + np.arange(200) % 2  # each device sees 2 clusters
    >>> km = KFed(n_clusters=4, device_clusters=2, random_state=0).fit(X, devices)
    >>> km.communication_["rounds"]
    1
    """

    def __init__(self, n_clusters=8, device_clusters=2, *, server_lloyd_rounds=1,
                 server_weighting="uniform", local_max_iter=300, proximity_ratio=3.0,
                 local_projection=True, participation=1.0, random_state=None):
        self.n_clusters = n_clusters
        self.device_clusters = device_clusters
        self.server_lloyd_rounds = server_lloyd_rounds
        self.server_weighting = server_weighting
        self.local_max_iter = local_max_iter
        self.proximity_ratio = proximity_ratio
        self.local_projection = local_projection
        self.participation = participation
        self.random_state = random_state

    def _check_params(self):
        check_int(self.n_clusters, "n_clusters", low=1)
        check_int(self.device_clusters, "device_clusters", low=1, high=self.n_clusters)
        check_int(self.server_lloyd_rounds, "server_lloyd_rounds", low=1)
        check_choice(self.server_weighting, "server_weighting", {"uniform", "size"})
        check_int(self.local_max_iter, "local_max_iter", low=1)
        check_real(self.proximity_ratio, "proximity_ratio", low=1.0)
        if not isinstance(self.local_projection, (bool, np.bool_)):
            raise TypeError(f"local_projection must be a bool; got {self.local_projection!r}")
        check_fraction(self.participation, "participation")

    def _local_clustering(self, federation, rng):
        return awasthi_sheffet(federation, self.device_clusters, random_state=rng,
                               proximity_ratio=self.proximity_ratio,
                               projection=bool(self.local_projection),
                               max_iter=self.local_max_iter)

    def fit(self, X, devices):
        """Run k-FED on the federation given by ``X`` and the device of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        devices : array-like of int, shape (n_samples,)

        Returns
        -------
        self
        """
        self._check_params()
        federation = Federation.from_devices(X, devices)
        rng = check_random_state(self.random_state)
        Z, d, k = federation.n_devices, federation.n_features, self.n_clusters
        n_participating = max(1, int(round(self.participation * Z)))
        participating = np.zeros(Z, dtype=bool)
        participating[rng.choice(Z, size=n_participating, replace=False)] = True

        # Algorithm 1 on every device (a device that fails still clusters its data locally)
        local = self._local_clustering(federation, rng)
        device_of_center, slot = np.nonzero(local.valid)
        centers = local.centers[device_of_center, slot]
        sizes = local.sizes[device_of_center, slot]
        sent = participating[device_of_center]
        if sent.sum() < k:
            raise ValueError(
                f"the {n_participating} participating devices sent {int(sent.sum())} local "
                f"centers, fewer than n_clusters={k}; raise device_clusters or participation"
            )

        # Algorithm 2 on the local centers that reached the server
        server_centers = centers[sent]
        first_device = rng.choice(np.flatnonzero(participating))
        first = np.flatnonzero(device_of_center[sent] == first_device)
        init = server_centers[farthest_point_seeding(server_centers, first, k)]
        weights = sizes[sent].astype(np.float64) if self.server_weighting == "size" else None
        server = lloyd(server_centers, init, weights=weights, max_iter=self.server_lloyd_rounds)
        self.server_init_ = init
        self.cluster_centers_ = server.centers

        # induced clustering (Definition 3.3); devices that failed map their local centers to the
        # nearest global center, as a new device would (Theorem 3.2)
        center_labels = np.empty(len(centers), dtype=np.int64)
        center_labels[sent] = server.labels
        if (~sent).any():
            center_labels[~sent] = assign(centers[~sent], server.centers)[0]
        global_of_local = np.full((Z, self.device_clusters), -1, dtype=np.int64)
        global_of_local[device_of_center, slot] = center_labels
        induced = global_of_local[federation.device_of_row, local.labels]
        self.labels_ = federation.to_original_order(induced)

        self.local_centers_ = centers
        self.local_center_devices_ = federation.device_ids[device_of_center]
        self.local_center_sizes_ = sizes
        self.local_center_labels_ = center_labels
        self.participating_devices_ = federation.device_ids[participating]
        self.device_ids_ = federation.device_ids
        self.n_iter_local_ = local.n_iter
        floats_per_center = d + (1 if self.server_weighting == "size" else 0)
        self.communication_ = Communication(
            rounds=1,
            floats_up=int(sent.sum()) * floats_per_center,
            floats_down=Z * k * d,
            messages_up=n_participating,
            messages_down=Z,
            devices_participating=n_participating,
        )
        return self

    def predict(self, X, devices=None):
        """Cluster new data with the fitted global centers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        devices : array-like of int, shape (n_samples,), optional
            Without ``devices`` each row goes to its nearest global center. With ``devices``
            each new device first runs Algorithm 1 on its own rows and every row takes the
            global cluster nearest to its local center -- the route of Theorem 3.2, which needs
            no new round of communication beyond downloading the centers.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        if devices is None:
            return super().predict(X)
        check_is_fitted(self, "cluster_centers_")
        X = self._check_test_data(X)
        federation = Federation.from_devices(X, check_devices(devices, X.shape[0]))
        local = self._local_clustering(federation, check_random_state(self.random_state))
        global_of_local = assign(local.centers.reshape(-1, X.shape[1]),
                                 self.cluster_centers_)[0].reshape(local.valid.shape)
        induced = global_of_local[federation.device_of_row, local.labels]
        return federation.to_original_order(induced)

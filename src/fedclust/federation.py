"""One representation of a federation, and the partitioners that build one.

A :class:`Federation` stores the rows of ``X`` sorted by device with CSR-like ``offsets``: the
rows of device ``z`` are ``X[offsets[z]:offsets[z + 1]]``. Every algorithm works on this layout,
so per-device work becomes contiguous slices and per-device reductions become segment sums.
It also carries the rows' weights (if any) and the :class:`~fedclust.topology.Topology` the
devices communicate over (a star around a server unless a graph is given).

The partitioners return a ``devices`` array (one device id per row, the ``fit(X, devices)``
convention of every estimator); :meth:`Federation.from_devices` sorts the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit, prange

from ._validation import (
    check_choice,
    check_data,
    check_devices,
    check_finite,
    check_int,
    check_random_state,
    check_sample_weight,
)
from .topology import Topology

__all__ = ["Federation", "iid_partition", "structured_partition", "subset_partition",
           "site_weight_partition", "device_clusters_of", "SITE_WEIGHT_SCHEMES"]

#: The partitions of Balcan, Ehrlich & Liang (2013, Sec. 5), see :func:`site_weight_partition`.
SITE_WEIGHT_SCHEMES = ("uniform", "similarity", "weighted", "degree")


@njit(parallel=True, cache=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def _take_rows_kernel(X, rows, out):  # pragma: no cover (compiled; Federation is tested)
    total = 0.0
    for i in prange(len(rows)):
        row_sum = 0.0
        for f in range(X.shape[1]):
            out[i, f] = X[rows[i], f]
            row_sum += X[rows[i], f]
        total += row_sum
    return total


def _take_rows(X: np.ndarray, rows: np.ndarray):
    """``X[rows]``, copied in parallel (a fit's largest copy: sorting the rows by device), and
    the sum of the copied entries (for the NaN/inf check, without a second pass)."""
    out = np.empty((len(rows), X.shape[1]), dtype=X.dtype)
    total = _take_rows_kernel(X, rows, out)
    return out, total


@njit(cache=True)
def _counting_sort_kernel(devices, first, order):  # pragma: no cover (compiled; tested via wrapper)
    for i in range(len(devices)):
        order[first[devices[i]]] = i
        first[devices[i]] += 1


def _sort_by_device(devices: np.ndarray):
    """Stable order of the rows by device id, the distinct ids and their row counts.

    ``order`` is None when the rows are already sorted. Ids that are small non-negative
    integers (the partitioners' ``0..Z-1``) are sorted by counting, in linear time.
    """
    n = len(devices)
    if n and devices.min() >= 0 and devices.max() < 4 * n:
        per_id = np.bincount(devices)
        device_ids = np.flatnonzero(per_id)
        counts = per_id[device_ids]
        if np.all(devices[1:] >= devices[:-1]):
            return None, device_ids, counts
        first = np.concatenate([[0], np.cumsum(per_id)[:-1]]).astype(np.int64)
        order = np.empty(n, dtype=np.int64)
        _counting_sort_kernel(devices, first, order)
        return order, device_ids, counts
    sorted_already = bool(np.all(devices[1:] >= devices[:-1]))
    order = None if sorted_already else np.argsort(devices, kind="stable")
    device_ids, counts = np.unique(devices if sorted_already else devices[order],
                                   return_counts=True)
    return order, device_ids, counts


@dataclass(frozen=True, eq=False)
class Federation:
    """Data of a federated network, rows sorted by device.

    Build one with :meth:`from_devices`. ``X`` and ``order`` satisfy
    ``X == X_original[order]``.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
        The rows, sorted by device (stable, so each device keeps its row order).
    offsets : ndarray of shape (n_devices + 1,)
        Device ``z`` holds rows ``offsets[z]:offsets[z + 1]``.
    device_ids : ndarray of shape (n_devices,)
        The original id of each device, in sorted order.
    order : ndarray of shape (n_samples,)
        ``X[i]`` is row ``order[i]`` of the original data.
    weights : ndarray of shape (n_samples,) or None
        Row weights in the sorted order; None means every row weighs 1.
    topology : Topology or None
        The graph the devices communicate over; its nodes include every device id (and may
        include devices without data, which still relay messages). None is the star around a
        server (built on demand by :attr:`network`).
    """

    X: np.ndarray
    offsets: np.ndarray
    device_ids: np.ndarray
    order: np.ndarray
    weights: np.ndarray | None = None
    topology: Topology | None = None

    @property
    def network(self) -> Topology:
        """The topology, the star around a server when none was given."""
        if self.topology is None:
            object.__setattr__(self, "topology", Topology.star(self.device_ids))
        return self.topology

    @property
    def is_star(self) -> bool:
        return self.topology is None or self.topology.is_star

    @classmethod
    def from_devices(cls, X, devices, *, sample_weight=None, topology: Topology | None = None,
                     allow_negative_weights: bool = False) -> Federation:
        """Sort the rows of ``X`` by their device id.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        devices : array-like of int, shape (n_samples,)
            Device id of each row; ids need not be contiguous.
        sample_weight : array-like of shape (n_samples,), optional
            Weight of every row (see :func:`fedclust._validation.check_sample_weight`).
        topology : Topology, optional
            The communication graph; every device id must be one of its nodes. Default: a
            star around a server.
        allow_negative_weights : bool, default=False
        """
        X = check_data(X, finite=False)
        devices = check_devices(devices, X.shape[0])
        weights = check_sample_weight(sample_weight, X.shape[0],
                                      allow_negative=allow_negative_weights)
        order, device_ids, counts = _sort_by_device(devices)
        if order is None:  # rows already in device order are not copied
            check_finite(X)
            X_sorted, order = X, np.arange(len(devices))
        else:  # the copy's sum checks the data
            X_sorted, total = _take_rows(X, order)
            check_finite(X_sorted, total=total)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        if topology is not None:
            if not isinstance(topology, Topology):
                raise TypeError(f"topology must be a fedclust.topology.Topology; got "
                                f"{type(topology).__name__}")
            topology.check_devices(device_ids)
        return cls(X=X_sorted, offsets=offsets, device_ids=device_ids, order=order,
                   weights=None if weights is None else weights[order], topology=topology)

    @property
    def n_devices(self) -> int:
        return len(self.device_ids)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def device_sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def device_weights(self) -> np.ndarray:
        """Total weight of every device (its size when rows are unweighted)."""
        if self.weights is None:
            return self.device_sizes.astype(np.float64)
        return np.add.reduceat(self.weights, self.offsets[:-1]) if self.n_samples else \
            np.zeros(self.n_devices)

    @property
    def row_weights(self) -> np.ndarray:
        """Weight of every sorted row (ones when unweighted)."""
        return np.ones(self.n_samples) if self.weights is None else self.weights

    @cached_property
    def device_of_row(self) -> np.ndarray:
        """Position (0..n_devices-1) of the device of each sorted row (computed once, read-only)."""
        positions = np.repeat(np.arange(self.n_devices), self.device_sizes)
        positions.flags.writeable = False
        return positions

    def device_data(self, position: int) -> np.ndarray:
        """Rows of the device at ``position`` (a view)."""
        return self.X[self.offsets[position]:self.offsets[position + 1]]

    def to_original_order(self, values: np.ndarray) -> np.ndarray:
        """Reorder per-row ``values`` computed on the sorted rows back to the input order."""
        out = np.empty_like(values)
        out[self.order] = values
        return out

    def subset(self, positions) -> Federation:
        """The federation restricted to the devices at ``positions`` (sorted order kept).

        ``order`` of the result still indexes rows of the original data.
        """
        positions = np.sort(np.asarray(positions, dtype=np.int64))
        starts, stops = self.offsets[positions], self.offsets[positions + 1]
        rows = _concatenate_ranges(starts, stops)
        sizes = stops - starts
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return Federation(X=self.X[rows], offsets=offsets, device_ids=self.device_ids[positions],
                          order=self.order[rows],
                          weights=None if self.weights is None else self.weights[rows],
                          topology=self.topology)


def _concatenate_ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])`` without the loop."""
    lengths = stops - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    # each row index is its range start plus its position within the range
    range_of_row = np.repeat(np.arange(len(starts)), lengths)
    position = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return starts[range_of_row] + position


def iid_partition(n_samples: int, n_devices: int, random_state=None) -> np.ndarray:
    """Assign rows to ``n_devices`` devices uniformly at random, sizes differing by at most one.

    Returns
    -------
    devices : ndarray of shape (n_samples,)
    """
    n_samples = check_int(n_samples, "n_samples", low=1)
    n_devices = check_int(n_devices, "n_devices", low=1, high=n_samples)
    rng = check_random_state(random_state)
    devices = np.arange(n_samples) % n_devices
    return rng.permutation(devices)


def site_weight_partition(X, topology, scheme: str, *, random_state=None,
                          chunk_rows: int = 65536) -> np.ndarray:
    """Send every row to a node of ``topology`` with probability proportional to the node's
    weight (Balcan, Ehrlich & Liang 2013, Sec. 5), independently row by row.

    Schemes (the paper's four):

    * ``"uniform"`` -- equal weights;
    * ``"weighted"`` -- one weight per node drawn from ``|N(0, 1)|``;
    * ``"degree"`` -- the node's degree in ``topology``;
    * ``"similarity"`` -- every node draws an anchor row of ``X`` uniformly; a row's weight
      for a node is its similarity to the anchor. The paper does not say which similarity:
      we take the Gaussian kernel ``exp(-||x - a||^2 / (2 s^2))`` with ``s^2`` the median
      squared distance from the rows to the anchors (the median heuristic) -- *not in the
      paper*.

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
    topology : Topology
        Its devices are the nodes rows go to (a star's server gets none).
    scheme : {"uniform", "similarity", "weighted", "degree"}
    random_state : int, Generator or None
    chunk_rows : int
        Rows whose node probabilities are held at once (``"similarity"``).

    Returns
    -------
    devices : ndarray of shape (n_samples,)
        A node id per row; a node may receive no row.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.topology import Topology
    >>> star = Topology.preferential_attachment(20, 2, random_state=0)
    >>> devices = site_weight_partition(np.zeros((1000, 2)), star, "degree", random_state=0)
    >>> int(devices.min()) >= 0 and int(devices.max()) < 20
    True
    """
    check_choice(scheme, "scheme", set(SITE_WEIGHT_SCHEMES))
    X = check_data(X)
    rng = check_random_state(random_state)
    nodes = np.asarray(topology.devices)
    n = X.shape[0]
    if scheme != "similarity":
        if scheme == "uniform":
            weights = np.ones(len(nodes))
        elif scheme == "weighted":
            weights = np.abs(rng.standard_normal(len(nodes)))
        else:
            weights = topology.degrees(nodes).astype(np.float64)
        return nodes[rng.choice(len(nodes), size=n, p=weights / weights.sum())]
    anchors = X[rng.integers(n, size=len(nodes))].astype(np.float64)
    a_sq = np.einsum("ij,ij->i", anchors, anchors)

    def sq_to_anchors(rows):
        rows = rows.astype(np.float64)
        return np.maximum(np.einsum("ij,ij->i", rows, rows)[:, None] - 2 * rows @ anchors.T
                          + a_sq[None], 0.0)

    # the median heuristic on (at most) 10,000 rows: the scale, not the partition, is sampled
    probe = X[np.sort(rng.choice(n, size=min(n, 10_000), replace=False))]
    scale = 2 * float(np.median(sq_to_anchors(probe))) or 1.0
    devices = np.empty(n, dtype=nodes.dtype)
    for start in range(0, n, chunk_rows):
        sq = sq_to_anchors(X[start:start + chunk_rows])
        # exp(-sq / scale) per node, normalized per row and computed stably (largest = 1)
        p = np.exp(-(sq - sq.min(axis=1, keepdims=True)) / scale)
        cumulative = np.cumsum(p, axis=1)
        u = rng.random(len(sq))[:, None] * cumulative[:, -1:]
        choice = np.minimum((cumulative < u).sum(axis=1), len(nodes) - 1)
        devices[start:start + len(sq)] = nodes[choice]
    return devices


def device_clusters_of(devices, labels) -> np.ndarray:
    """``k^(z)``: the number of distinct target clusters on every device.

    Returns
    -------
    ndarray of shape (n_devices,)
        Aligned with ``np.unique(devices)`` (the order every estimator sorts devices in).
    """
    devices = np.asarray(devices)
    labels = np.asarray(labels)
    if devices.shape != labels.shape or devices.ndim != 1:
        raise ValueError(f"devices and labels must be 1-D of equal length; got {devices.shape} "
                         f"and {labels.shape}")
    pairs = np.unique(np.stack([devices, np.unique(labels, return_inverse=True)[1]]), axis=1)
    return np.bincount(np.unique(pairs[0], return_inverse=True)[1])


def _with_counts(devices, labels, return_device_clusters):
    if return_device_clusters:
        return devices, device_clusters_of(devices, labels)
    return devices


def structured_partition(labels, device_clusters: int, devices_per_group: int,
                         random_state=None, *, groups=None, return_device_clusters=False):
    """Heterogeneous partition: every device holds data of at most ``device_clusters`` clusters.

    This is the construction of k-FED's Table 1 (Dennis et al., 2021, Sec. 4.1): the ``k``
    target clusters are split into groups ``G_i`` of ``k'`` clusters (at random, or as given
    by ``groups``; the last group smaller when ``k'`` does not divide ``k``), and the samples of
    each group are split evenly over ``m0`` devices of their own, each cluster's samples too
    (to within one sample). Each device therefore holds ``1/m0`` of every cluster of its group,
    and each cluster lives on exactly ``m0`` devices (when it has at least ``m0`` samples).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Target cluster of every row.
    device_clusters : int
        ``k'``, the number of clusters in a group (and the most any device sees).
    devices_per_group : int
        ``m0``, the number of devices a group's samples are split over.
    random_state : int, Generator or None
    groups : array-like of shape (k,), optional
        Group of every cluster (in the order of ``np.unique(labels)``), e.g. the groups a
        mixture was generated with (:func:`fedclust.data.mixture_groups`); default: random
        groups of ``k'``.
    return_device_clusters : bool, default=False
        Also return ``k^(z)`` of every device (:func:`device_clusters_of`).

    Returns
    -------
    devices : ndarray of shape (n_samples,)
        Device ``i * m0 + j`` is the ``j``-th device of group ``i``.
    device_clusters : ndarray of shape (n_devices,)
        Only with ``return_device_clusters``.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError("labels must be a non-empty 1-D array")
    device_clusters = check_int(device_clusters, "device_clusters", low=1)
    devices_per_group = check_int(devices_per_group, "devices_per_group", low=1)
    rng = check_random_state(random_state)
    clusters, cluster_of_row = np.unique(labels, return_inverse=True)
    k = len(clusters)
    if groups is None:
        group_of_cluster = np.empty(k, dtype=np.int64)
        group_of_cluster[rng.permutation(k)] = np.arange(k) // device_clusters
    else:
        group_of_cluster = np.unique(np.asarray(groups), return_inverse=True)[1]
        if group_of_cluster.shape != (k,):
            raise ValueError(f"groups must give the group of each of the {k} clusters; got "
                             f"shape {np.shape(groups)}")
        largest = np.bincount(group_of_cluster).max()
        if largest > device_clusters:
            raise ValueError(f"groups has a group of {largest} clusters, more than "
                             f"device_clusters={device_clusters}")
    group_of_row = group_of_cluster[cluster_of_row]
    # within each group, order rows by cluster (randomly within a cluster) and deal them
    # round-robin to the group's m0 devices: every cluster and every device gets an even share
    by_group = np.lexsort((rng.random(len(labels)), cluster_of_row, group_of_row))
    group_sorted = group_of_row[by_group]
    group_sizes = np.bincount(group_sorted)
    if np.any(group_sizes < devices_per_group):
        raise ValueError(
            f"devices_per_group={devices_per_group} exceeds the size of a group "
            f"({group_sizes.min()} samples): some devices would be empty"
        )
    rank_in_group = np.arange(len(labels)) - np.repeat(np.cumsum(group_sizes) - group_sizes,
                                                       group_sizes)
    devices = np.empty(len(labels), dtype=np.int64)
    devices[by_group] = group_sorted * devices_per_group + rank_in_group % devices_per_group
    return _with_counts(devices, labels, return_device_clusters)


def subset_partition(labels, n_devices: int, device_clusters: int, random_state=None, *,
                     return_device_clusters=False):
    """``Z`` devices, each holding data of a random subset of at most ``k'`` clusters.

    The partition of k-FED's Fig 2 and 3 (Sec. 4.2.1: "each device receives only data from a
    random subset of no more than k' clusters"): every device draws ``k'`` of the ``k``
    clusters uniformly at random (all of them when ``k' >= k``); a cluster no device drew
    replaces a drawn cluster of a device that shares it with another device, so every cluster
    has a holder; the rows of each cluster are then dealt evenly (in random order) over its
    holders. ``Z`` does not depend on ``k'``, so IID partitions over the same ``Z`` devices
    compare directly.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
    n_devices : int
        ``Z``; ``Z k'`` must be at least the number of clusters ``k``.
    device_clusters : int
        ``k'``.
    random_state : int, Generator or None
    return_device_clusters : bool, default=False
        Also return ``k^(z)`` of every device (at most ``k'``; fewer only when a device's
        clusters have too few rows to reach it).

    Returns
    -------
    devices : ndarray of shape (n_samples,)
    device_clusters : ndarray of shape (n_devices,)
        Only with ``return_device_clusters``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.federation import subset_partition
    >>> labels = np.repeat(np.arange(6), 50)
    >>> devices, kz = subset_partition(labels, 10, 2, random_state=0,
    ...                                return_device_clusters=True)
    >>> len(np.unique(devices)), int(kz.max())
    (10, 2)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError("labels must be a non-empty 1-D array")
    clusters, cluster_of_row = np.unique(labels, return_inverse=True)
    k = len(clusters)
    Z = check_int(n_devices, "n_devices", low=1)
    kp = min(check_int(device_clusters, "device_clusters", low=1), k)
    if Z * kp < k:
        raise ValueError(f"n_devices={Z} devices with at most device_clusters={kp} clusters "
                         f"each cannot hold all {k} clusters: raise n_devices to at least "
                         f"{-(-k // kp)}")
    rng = check_random_state(random_state)
    held = np.zeros((Z, k), dtype=bool)
    for z in range(Z):
        held[z, rng.choice(k, size=kp, replace=False)] = True
    for r in rng.permutation(np.flatnonzero(~held.any(axis=0))):
        # a device giving up a cluster that another device also holds
        shared = held & (held.sum(axis=0) > 1)[None, :]
        z = rng.choice(np.flatnonzero(shared.any(axis=1)))
        held[z, rng.choice(np.flatnonzero(shared[z]))] = False
        held[z, r] = True
    sizes = np.bincount(cluster_of_row, minlength=k)
    holders = held.sum(axis=0)
    if np.any(sizes < holders):
        r = int(np.argmax(holders - sizes))
        raise ValueError(f"cluster {clusters[r]!r} has {sizes[r]} rows for {holders[r]} devices:"
                         f" lower n_devices or device_clusters")
    devices = np.empty(len(labels), dtype=np.int64)
    order = np.lexsort((rng.random(len(labels)), cluster_of_row))
    start = 0
    for r in range(k):
        rows = order[start:start + sizes[r]]
        start += sizes[r]
        devices[rows] = np.flatnonzero(held[:, r])[np.arange(sizes[r]) % holders[r]]
    return _with_counts(devices, labels, return_device_clusters)

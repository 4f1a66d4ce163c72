"""Every way the pipeline assigns rows to devices, in one module.

Each partitioner returns ``devices``, one device id per row (what every estimator's
``fit(X, devices=...)`` takes): :func:`iid_partition` (uniformly at random),
:func:`structured_partition` (k-FED's Table 1: groups of ``k'`` clusters over ``m0`` devices
each), :func:`subset_partition` (k-FED's Figs 2-3: random subsets of ``k'`` clusters),
:func:`site_weight_partition` (Balcan et al.'s Sec. 5 site weightings of a graph's nodes),
:func:`mix_partition` (natural to IID), :func:`every_pair_partition` (k-FED's Table 2
rotations) and :func:`powerlaw_class_partition` (k-FED's FEMNIST for Fig 4, FedProx's power
law). Natural partitions come with the data (``fedclust.data.prepared``);
:func:`partition_devices` resolves the names the comparison's config uses.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._validation import check_choice, check_data, check_int, check_random_state

__all__ = ["iid_partition", "structured_partition", "subset_partition",
           "site_weight_partition", "mix_partition", "every_pair_partition",
           "powerlaw_class_partition", "device_clusters_of", "SITE_WEIGHT_SCHEMES",
           "COMPARISON_PARTITIONS", "partition_devices"]

#: The partitions of Balcan, Ehrlich & Liang (2013, Sec. 5), see :func:`site_weight_partition`.
SITE_WEIGHT_SCHEMES = ("uniform", "similarity", "weighted", "degree")


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
    >>> from fedclust.partitions import subset_partition
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


def mix_partition(devices, fraction: float, random_state=None) -> np.ndarray:
    """Move a ``fraction`` of the rows to devices drawn uniformly at random.

    ``fraction=0`` keeps the natural partition, ``fraction=1`` deals every row at random: the
    device sizes stay those of the natural partition in expectation, the heterogeneity goes.
    """
    rng = check_random_state(random_state)
    devices = np.asarray(devices).copy()
    ids = np.unique(devices)
    moved = rng.random(len(devices)) < fraction
    devices[moved] = rng.choice(ids, size=int(moved.sum()))
    return devices


#: The partitions the comparison's config names (and ``mix=<fraction>``).
COMPARISON_PARTITIONS = ("iid", "structured", "natural")


def partition_devices(partition: str, *, reference_labels, natural, n_devices: int,
                      device_clusters: int, seed: int) -> np.ndarray:
    """The device of every row under ``partition`` (``iid``, ``structured``, ``natural`` or
    ``mix=<fraction>``)."""
    n = len(reference_labels)
    if partition == "iid":
        return iid_partition(n, n_devices, random_state=seed)
    if partition == "structured":
        return subset_partition(reference_labels, n_devices, device_clusters, random_state=seed)
    if natural is None or np.any(np.asarray(natural) < 0):
        raise ValueError(f"partition {partition!r} needs the data set's natural devices; this "
                         f"one has none (use iid or structured)")
    if partition == "natural":
        return np.asarray(natural)
    if partition.startswith("mix="):
        return mix_partition(natural, float(partition.removeprefix("mix=")), random_state=seed)
    raise ValueError(f"unknown partition {partition!r}; expected one of {COMPARISON_PARTITIONS} or "
                     f"'mix=<fraction>'")


def every_pair_partition(rotation, n_devices: int, rng) -> np.ndarray:
    """Device of every row when device ``z`` holds the ``z mod 6``-th pair of the four
    rotations (rotated MNIST's ``every_pair`` pairing, k' = 2): each rotation's rows,
    shuffled, dealt evenly over the devices holding it."""
    pairs = np.array(list(itertools.combinations(range(4), 2)))
    held = pairs[np.arange(n_devices) % len(pairs)]               # (n_devices, 2)
    devices = np.empty(len(rotation), dtype=np.int64)
    for r in range(4):
        rows = rng.permutation(np.flatnonzero(rotation == r))
        holders = np.flatnonzero((held == r).any(axis=1))
        for device, part in zip(holders, np.array_split(rows, len(holders)), strict=True):
            devices[part] = device
    return devices


def powerlaw_class_partition(y, n_devices: int = 500, *, n_classes: int = 10,
                             classes_per_device: int = 2, base: int = 5, sigma: float = 2.0,
                             random_state=None) -> np.ndarray:
    """Device of every row (-1: not dealt) for k-FED's FEMNIST partition (App. B.1).

    App. B.1: "we manually partition a subset of FEMNIST (first 10 classes) by assigning 2
    classes to each device. There are 500 devices in total. Both the number of training
    samples across all devices and the number of training samples per class within each
    device follow a power law." The paper gives no construction; this is FedProx's (Li et al.,
    2020b, co-authored by k-FED's T. Li; ``data/mnist/generate_niid.py``), reconstructed:
    device ``u`` holds classes ``(u + j) mod n_classes``, ``j < classes_per_device``; each
    (device, class) slot first gets ``base`` rows, then the rest of every class is dealt over
    its slots in proportion to log-normal(0, ``sigma``) weights (floors; the few rows left by
    the floors are not dealt).
    """
    y = np.asarray(y)
    n_devices = check_int(n_devices, "n_devices", low=1)
    n_classes = check_int(n_classes, "n_classes", low=1)
    per = check_int(classes_per_device, "classes_per_device", low=1, high=n_classes)
    base = check_int(base, "base", low=0)
    rng = np.random.default_rng(random_state)
    devices = np.full(len(y), -1, dtype=np.int64)
    slot_device = np.repeat(np.arange(n_devices), per)
    slot_class = (slot_device + np.tile(np.arange(per), n_devices)) % n_classes
    weights = rng.lognormal(0.0, sigma, size=len(slot_device))
    for c in range(n_classes):
        rows = rng.permutation(np.flatnonzero(y == c))
        slots = np.flatnonzero(slot_class == c)
        if len(rows) < base * len(slots):
            raise ValueError(f"class {c} has {len(rows)} rows; {len(slots)} devices need "
                             f"{base} each (base)")
        w = weights[slots] / weights[slots].sum()
        counts = base + np.floor(w * (len(rows) - base * len(slots))).astype(np.int64)
        devices[rows[:counts.sum()]] = np.repeat(slot_device[slots], counts)
    return devices

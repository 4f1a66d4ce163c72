"""One representation of a federation (the partitioners that assign rows to devices are in
:mod:`fedclust.partitions`).

A :class:`Federation` stores the rows of ``X`` sorted by device with CSR-like ``offsets``: the
rows of device ``z`` are ``X[offsets[z]:offsets[z + 1]]``. Every algorithm works on this layout,
so per-device work becomes contiguous slices and per-device reductions become segment sums.
It also carries the rows' weights (if any) and the :class:`~fedclust.topology.Topology` the
devices communicate over (a star around a server unless a graph is given).

A partitioner returns a ``devices`` array (one device id per row, the ``fit(X, devices=...)``
convention of every estimator); :meth:`Federation.from_devices` sorts the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._jit import njit, prange
from ._validation import (
    check_data,
    check_devices,
    check_finite,
    check_sample_weight,
)
from .topology import Topology

__all__ = ["Federation"]


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
    if n and devices.dtype.kind in "iu" and devices.min() >= 0 and devices.max() < 4 * n:
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


def _are_node_ids(ids: np.ndarray) -> bool:
    """Whether device ids can name a topology's nodes: non-negative integers (the server is
    node -1)."""
    return ids.dtype.kind in "iu" and (ids.size == 0 or ids.min() >= 0)


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
            object.__setattr__(self, "topology", Topology.star(self.node_ids))
        return self.topology

    @cached_property
    def node_ids(self) -> np.ndarray:
        """The devices' nodes in the :attr:`network`: their ids where these are non-negative
        integers, else their positions ``0..n_devices-1`` (string ids, negative ids: the
        server is node -1)."""
        ids = self.device_ids
        if _are_node_ids(ids):
            return ids.astype(np.int64, copy=False)
        return np.arange(len(ids), dtype=np.int64)

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
            if not _are_node_ids(device_ids):
                raise ValueError(f"a topology's nodes are non-negative integers, the devices' "
                                 f"ids; these devices are named {device_ids[:3].tolist()}...: "
                                 f"give them the ids of their nodes")
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

"""k-FED's clustering as groups of federated training (k-FED, Sec. 4.2.2).

After one-shot k-FED, each device's training rows carry the global cluster of their local
centre (``KFed.labels_``, the induced clustering of Definition 3.3). A device then trains the
model of every cluster it holds, on its rows of that cluster (a *segment*: at k' = 1 the
device itself; at k' = 2 each device has up to two). A new row of a device (a test row) goes
to the nearest of the device's own local centres and takes that centre's cluster: no
communication beyond what k-FED sent.
"""

from __future__ import annotations

import numpy as np

from ..federation import Federation
from ..lloyd import assign_by_device

__all__ = ["segments_of", "route_by_local_centers"]


def segments_of(devices, labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segment label of every row for the pairs (device, cluster), and each segment's device
    and cluster (in the order of the sorted segment labels)."""
    devices, labels = np.asarray(devices, dtype=np.int64), np.asarray(labels, dtype=np.int64)
    n_clusters = int(labels.max()) + 1
    segment = devices * n_clusters + labels
    ids = np.unique(segment)
    return segment, ids // n_clusters, ids % n_clusters


def route_by_local_centers(kfed, X, devices) -> np.ndarray:
    """Global cluster of every row of ``X``: the cluster of the nearest local centre of its
    own device (``devices``, ids the fit saw)."""
    devices = np.asarray(devices)
    unknown = np.setdiff1d(np.unique(devices), kfed.device_ids_)
    if unknown.size:
        raise ValueError(f"devices {unknown[:5].tolist()} were not in the k-FED fit; route "
                         f"new devices with KFed.predict(X, devices)")
    federation = Federation.from_devices(np.asarray(X, dtype=kfed.local_centers_.dtype),
                                         devices)
    position = np.searchsorted(kfed.device_ids_, kfed.local_center_devices_)
    # centres arrive grouped by device: a centre's slot is its rank within its device
    starts = np.flatnonzero(np.r_[True, np.diff(position) != 0])
    slot = np.arange(len(position)) - np.repeat(starts, np.diff(np.r_[starts, len(position)]))
    width = int(slot.max()) + 1
    where = np.searchsorted(kfed.device_ids_, federation.device_ids)
    centers = np.zeros((federation.n_devices, width, X.shape[1]), dtype=federation.X.dtype)
    mask = np.zeros((federation.n_devices, width), dtype=bool)
    table = np.full((len(kfed.device_ids_), width), -1, dtype=np.int64)
    table[position, slot] = np.arange(len(position))
    chosen = table[where]                                  # local centre index, -1 padding
    mask[:] = chosen >= 0
    centers[mask] = kfed.local_centers_[chosen[mask]]
    local, _ = assign_by_device(federation, centers, center_mask=mask)
    center_of_row = chosen[federation.device_of_row, local]
    return federation.to_original_order(kfed.local_center_labels_[center_of_row])

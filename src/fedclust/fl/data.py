"""Per-device data for federated training.

* :class:`DeviceStore`: the rows of every segment (a device, or a device's part of one
  cluster) contiguous, as tensors, with minibatches drawn for many segments in one call.
* :func:`split_per_device`: each device's own train/test split.
* :func:`powerlaw_class_partition`: k-FED's FEMNIST partition for Fig 4 (App. B.1), built the
  way FedProx (Li et al., 2020b) builds its power-law MNIST.
* :func:`rotate_images`: Table 2's rotations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .._validation import check_int

__all__ = ["as_model_input", "DeviceStore", "split_per_device", "powerlaw_class_partition",
           "rotate_images"]


def as_model_input(X) -> torch.Tensor:
    """Rows as the models read them: floating features as float32, integer codes (characters)
    as int64 (what an embedding takes)."""
    X = np.asarray(X)
    dtype = np.float32 if np.issubdtype(X.dtype, np.floating) else np.int64
    return torch.from_numpy(np.ascontiguousarray(X, dtype=dtype))


@dataclass(frozen=True, eq=False)
class DeviceStore:
    """Rows grouped by segment: segment ``s`` holds rows ``offsets[s]:offsets[s + 1]``.

    Build it with :meth:`from_arrays`; ``segment_ids[s]`` is the label segment ``s`` had
    there, ``order`` the input position of every stored row.
    """

    X: torch.Tensor
    y: torch.Tensor
    offsets: torch.Tensor
    segment_ids: np.ndarray
    order: np.ndarray

    @classmethod
    def from_arrays(cls, X, y, segments) -> DeviceStore:
        """Store rows ``X``, targets ``y`` grouped by ``segments`` (one label per row; rows
        keep their order within a segment). Floating ``X`` is stored as float32, integer ``X``
        (character codes) as int64."""
        X, y, segments = np.asarray(X), np.asarray(y), np.asarray(segments)
        if not len(X) == len(y) == len(segments):
            raise ValueError(f"X, y and segments must have the same length; got {len(X)}, "
                             f"{len(y)} and {len(segments)}")
        if len(X) == 0:
            raise ValueError("a device store needs at least one row")
        ids, inverse = np.unique(segments, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        offsets = np.concatenate([[0], np.cumsum(np.bincount(inverse, minlength=len(ids)))])
        return cls(X=as_model_input(X[order]),
                   y=torch.from_numpy(np.ascontiguousarray(y[order], dtype=np.int64)),
                   offsets=torch.from_numpy(offsets.astype(np.int64)),
                   segment_ids=ids, order=order)

    @property
    def n_segments(self) -> int:
        return len(self.segment_ids)

    @property
    def sizes(self) -> torch.Tensor:
        return self.offsets[1:] - self.offsets[:-1]

    def segment_of_row(self) -> np.ndarray:
        """Segment (position) of every stored row."""
        return np.repeat(np.arange(self.n_segments), self.sizes.numpy())

    def sample(self, segments: torch.Tensor, size: int, generator: torch.Generator,
               *, steps: int | None = None):
        """``size`` rows of each of ``segments``, uniform with replacement: ``X`` of shape
        ``(len(segments), size, ...)`` and ``y`` of shape ``(len(segments), size)``.

        With ``steps``, the draws of ``steps`` such calls at once (a leading dimension
        ``steps``): the same rows, in the same order, as ``steps`` calls one after another
        (torch's generator fills a tensor in order)."""
        start, n = self.offsets[segments], self.sizes[segments]
        shape = (len(segments), size) if steps is None else (steps, len(segments), size)
        u = torch.rand(shape, generator=generator)
        offset = torch.minimum((u * n[:, None]).long(), (n - 1)[:, None])
        rows = start[:, None] + offset
        return self.X[rows], self.y[rows]


def split_per_device(devices, test_fraction: float, random_state=None, *, order=None):
    """Each device's rows split into train and test: ``round(test_fraction * n_z)`` test rows
    per device (at least one when the device has two rows or more), drawn at random, or the
    last rows by ``order`` (e.g. the position in a text, so overlapping windows do not leak
    between the two sides, as LEAF splits Shakespeare by time).

    Returns a boolean mask, True on test rows.
    """
    devices = np.asarray(devices)
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction!r}")
    rng = np.random.default_rng(random_state)
    key = rng.random(len(devices)) if order is None else np.asarray(order, dtype=float)
    by_device = np.lexsort((key, devices))          # devices ascending, then key
    ids, first, counts = np.unique(devices[by_device], return_index=True, return_counts=True)
    n_test = np.where(counts >= 2, np.maximum(np.rint(test_fraction * counts), 1), 0)
    rank = np.arange(len(devices)) - np.repeat(first, counts)
    test = np.zeros(len(devices), dtype=bool)
    test[by_device] = rank >= np.repeat(counts - n_test, counts)
    return test


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


def rotate_images(X, quarter_turns: int, side: int = 28) -> np.ndarray:
    """Flat square images turned by ``quarter_turns`` x 90 degrees counter-clockwise."""
    X = np.asarray(X)
    turned = np.rot90(X.reshape(-1, side, side), int(quarter_turns), axes=(1, 2))
    return np.ascontiguousarray(turned.reshape(len(X), side * side))

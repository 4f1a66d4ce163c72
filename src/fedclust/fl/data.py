"""Per-device data for federated training.

* :class:`DeviceStore`: the rows of every segment (a device, or a device's part of one
  cluster) contiguous, as tensors, with minibatches drawn for many segments in one call.
* :func:`split_per_device`: each device's own train/test split.
* :func:`rotate_images`: Table 2's rotations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

__all__ = ["as_model_input", "DeviceStore", "split_per_device", "rotate_images"]


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

    def to(self, device) -> DeviceStore:
        """The same store with its rows and targets on ``device`` (a torch device); the
        offsets stay on the CPU, where the minibatch rows are drawn."""
        device = torch.device(device)
        if self.X.device == device:
            return self
        return DeviceStore(X=self.X.to(device), y=self.y.to(device), offsets=self.offsets,
                           segment_ids=self.segment_ids, order=self.order)

    @cached_property
    def _offsets(self) -> np.ndarray:
        return self.offsets.numpy()

    @cached_property
    def _sizes(self) -> np.ndarray:
        return np.diff(self._offsets)

    @property
    def n_segments(self) -> int:
        return len(self.segment_ids)

    @property
    def sizes(self) -> torch.Tensor:
        return self.offsets[1:] - self.offsets[:-1]

    def segment_of_row(self) -> np.ndarray:
        """Segment (position) of every stored row."""
        return np.repeat(np.arange(self.n_segments), self.sizes.numpy())

    def draw_rows(self, segments: torch.Tensor, size: int, generator: torch.Generator,
                  *, steps: int | None = None) -> torch.Tensor:
        """Positions of ``size`` rows of each of ``segments``, uniform with replacement:
        shape ``(len(segments), size)``, or ``(steps, len(segments), size)`` with ``steps``
        (the draws of ``steps`` such calls at once, in the same order). Drawn on the CPU from
        ``generator`` (a CPU generator), so a store on a GPU gives the same rows."""
        segments = np.asarray(segments.cpu() if torch.is_tensor(segments) else segments)
        start, n = self._offsets[segments], self._sizes[segments]
        shape = (len(segments), size) if steps is None else (steps, len(segments), size)
        u = torch.rand(shape, generator=generator).numpy()
        # float32 products truncated, as torch computes u * n for a float32 u
        offset = np.minimum((u * n.astype(np.float32)[:, None]).astype(np.int64),
                            (n - 1)[:, None])
        return torch.from_numpy(start[:, None] + offset)

    def sample(self, segments: torch.Tensor, size: int, generator: torch.Generator,
               *, steps: int | None = None):
        """The rows :meth:`draw_rows` draws: ``X`` of shape ``(len(segments), size, ...)``
        and ``y`` of shape ``(len(segments), size)`` (a leading ``steps`` with ``steps``),
        on the store's device."""
        rows = self.draw_rows(segments, size, generator, steps=steps).to(self.X.device)
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


def rotate_images(X, quarter_turns: int, side: int = 28) -> np.ndarray:
    """Flat square images turned by ``quarter_turns`` x 90 degrees counter-clockwise."""
    X = np.asarray(X)
    turned = np.rot90(X.reshape(-1, side, side), int(quarter_turns), axes=(1, 2))
    return np.ascontiguousarray(turned.reshape(len(X), side * side))

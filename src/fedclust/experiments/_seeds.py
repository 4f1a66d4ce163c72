"""Seeds for experiment runs, all derived from the one configured seed."""

from __future__ import annotations

import numpy as np

__all__ = ["run_seed"]


def run_seed(base_seed: int, *keys: int) -> int:
    """A seed for one run, derived from ``base_seed`` and integer ``keys`` (grid indices, run).

    Different keys give statistically independent streams (``numpy.random.SeedSequence``
    spawn keys), and the same keys always give the same seed, whatever else runs.
    """
    keys = tuple(int(k) for k in keys)
    if any(k < 0 for k in keys):
        raise ValueError(f"seed keys must be non-negative; got {keys}")
    return int(np.random.SeedSequence(int(base_seed), spawn_key=keys).generate_state(1)[0])

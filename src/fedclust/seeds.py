"""Seeds derived from stable names, so that every run is independent of every other.

An experiment asks for the seed of one (experiment, setting, algorithm, run) by naming it:
``seed_for(base_seed, "kfed", "participation", "dataset=femnist", "p=0.5", "run=3")``. The seed
depends on the base seed and these names only -- never on the position of a setting in a list,
nor on what else is configured -- so adding, removing or reordering other settings,
algorithms or data sets leaves every other number unchanged. Things that must be shared (the
partition that two algorithms are compared on, the data of one trial) are drawn from a seed
whose names leave out what they are shared across.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np

__all__ = ["seed_for", "generator_for"]


def _name(part) -> str:
    if isinstance(part, bool) or part is None:
        return str(part)
    if isinstance(part, numbers.Integral):
        return str(int(part))
    if isinstance(part, numbers.Real):
        value = float(part)
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(part, str):
        return part
    raise TypeError(f"seed names must be strings or numbers; got {part!r}")


def seed_for(base_seed: int, *names) -> int:
    """A 31-bit int seed for the run named by ``names`` under ``base_seed``.

    Names are strings or numbers (``1`` and ``1.0`` name the same thing). Different names
    give statistically independent streams (a ``numpy.random.SeedSequence`` whose entropy is
    the base seed and a SHA-256 digest of the names).

    Examples
    --------
    >>> from fedclust.seeds import seed_for
    >>> seed_for(2021, "kfed", "run=0") == seed_for(2021, "kfed", "run=0")
    True
    >>> seed_for(2021, "kfed", "run=0") != seed_for(2021, "kfed", "run=1")
    True
    """
    if isinstance(base_seed, bool) or not isinstance(base_seed, numbers.Integral) \
            or base_seed < 0:
        raise ValueError(f"base_seed must be a non-negative integer; got {base_seed!r}")
    text = "\x1f".join(_name(part) for part in names)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    words = np.frombuffer(digest[:16], dtype="<u4").tolist()
    state = np.random.SeedSequence([int(base_seed), *words]).generate_state(1)[0]
    return int(state >> 1)


def generator_for(base_seed: int, *names) -> np.random.Generator:
    """``numpy.random.default_rng(seed_for(base_seed, *names))``."""
    return np.random.default_rng(seed_for(base_seed, *names))

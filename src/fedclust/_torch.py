"""The one seeded, deterministic block every torch training of fedclust runs in."""

from __future__ import annotations

import contextlib

import torch

__all__ = ["deterministic"]


@contextlib.contextmanager
def deterministic(seed: int):
    """Seed torch's global generator for the block and restore it (and the deterministic
    algorithms flag) afterwards, so a run does not depend on what ran before it."""
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(enabled, warn_only=warn_only)

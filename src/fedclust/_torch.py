"""The one seeded, deterministic block every torch training of fedclust runs in."""

from __future__ import annotations

import contextlib

import torch

__all__ = ["deterministic"]


@contextlib.contextmanager
def deterministic(seed: int):
    """Seed torch's global generator for the block and restore it (and the deterministic
    algorithms flag) afterwards, so a run does not depend on what ran before it."""
    previous = torch.get_deterministic_debug_mode()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        # "error" is use_deterministic_algorithms(True) for eager code, set without that
        # function's import of Inductor (1.1-1.3 s of CPU per process, measured): nothing here is
        # compiled, so Inductor's own deterministic flag has nothing to act on
        torch.set_deterministic_debug_mode("error")
        try:
            yield
        finally:
            torch.set_deterministic_debug_mode(previous)

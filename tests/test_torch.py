"""The seeded, deterministic block every torch training runs in (fedclust._torch)."""

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from fedclust._torch import deterministic  # noqa: E402


@pytest.mark.parametrize("before", ["default", "warn", "error"])
def test_deterministic_block_turns_the_flag_on_and_restores_mode_and_generator(before):
    previous = torch.get_deterministic_debug_mode()
    torch.set_deterministic_debug_mode(before)
    try:
        state = torch.get_rng_state()
        with deterministic(3):
            assert torch.are_deterministic_algorithms_enabled()
            assert not torch.is_deterministic_algorithms_warn_only_enabled()
            first = torch.rand(2)
        with deterministic(3):
            assert torch.equal(torch.rand(2), first)  # the seed alone decides the draws
        assert torch.equal(torch.get_rng_state(), state)
        assert torch.get_deterministic_debug_mode() == {"default": 0, "warn": 1, "error": 2}[before]
    finally:
        torch.set_deterministic_debug_mode(previous)


def test_deterministic_block_does_not_import_inductor():
    # torch.use_deterministic_algorithms imports torch._inductor (seconds per job); the block
    # sets the same eager flag without it
    code = ("import sys, torch; from fedclust._torch import deterministic\n"
            "with deterministic(0): torch.rand(1)\n"
            "print('torch._inductor' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"

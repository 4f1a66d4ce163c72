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


def test_device_settings_resolve_or_are_refused_in_one_line():
    from fedclust._torch import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("gpu", "cuda:x", "cpu:0", ""):
        with pytest.raises(ValueError, match="device must be 'auto', 'cpu', 'cuda'"):
            resolve_device(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_asked_without_a_gpu_says_what_to_do():
    from fedclust._torch import resolve_device, uses_cuda

    with pytest.raises(RuntimeError, match=r"sees no CUDA device.*docs/gpu.md"):
        resolve_device("cuda")
    assert not uses_cuda("auto") and not uses_cuda("cpu")


def test_a_plan_on_a_cpu_setting_asks_nothing_of_torch():
    # the Snakefile decides Table 2's jobs at parse time: 'cpu' (and 'auto' with no NVIDIA
    # driver) must not cost every snakemake call a torch import
    code = ("import sys; from fedclust._torch import uses_cuda\n"
            "print(uses_cuda('cpu'), 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False False"


def test_the_deterministic_block_leaves_the_cuda_generator_alone_on_a_cpu_device():
    from fedclust._torch import deterministic

    with deterministic(1, torch.device("cpu")):
        first = torch.rand(3)
    with deterministic(1, torch.device("cpu")):
        assert torch.equal(torch.rand(3), first)

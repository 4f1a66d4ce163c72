"""Where torch work runs and the seeded, deterministic block every torch training runs in.

(torch is imported where it is used, so a plan can ask :func:`uses_cuda` without it.)

Every torch workload (k-FED's Table 2 and Fig 4, the CNN embeddings) takes a ``device``
setting: ``"cpu"``, ``"cuda"`` (or ``"cuda:N"``) or ``"auto"`` (CUDA when torch sees a GPU,
else the CPU). Random draws stay on the CPU's generators wherever the code draws them
itself, so a seed gives the same initial models, devices and minibatch rows on either
device; only the arithmetic differs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["DEVICES", "cuda_driver_present", "deterministic", "deterministic_algorithms",
           "resolve_device", "uses_cuda"]

#: The values a ``device`` setting may take (``"cuda:N"`` names one GPU of several).
DEVICES = ("auto", "cpu", "cuda")

# cuBLAS picks its reduction order per workspace; this fixed workspace makes its products
# repeatable (NVIDIA's cuBLAS docs, "Results reproducibility"; torch raises without it in
# deterministic mode). It must be set before the process's first cuBLAS call.
_CUBLAS_WORKSPACE = ":4096:8"


def _kind(device) -> str:
    name = str(device)
    kind = name.split(":", 1)[0]
    if kind not in DEVICES or (":" in name and (kind != "cuda" or not name[5:].isdigit())):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}")
    return kind


def resolve_device(device="cpu") -> torch.device:
    """The torch device a ``device`` setting names.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device
        ``"auto"``: the first CUDA device when torch sees one, else the CPU.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        An unknown setting.
    RuntimeError
        ``"cuda"`` asked where torch sees no GPU (a CPU build of torch, or no driver).
    """
    import torch

    kind = _kind(device)
    if kind == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        if kind == "auto":
            return torch.device("cpu")
        raise RuntimeError(
            f"device={str(device)!r}: torch {torch.__version__} sees no CUDA device (a CPU "
            f"build or no driver); set device: cpu or auto, or install torch's CUDA build "
            f"(docs/gpu.md)")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", _CUBLAS_WORKSPACE)
    return torch.device("cuda" if kind == "auto" else str(device))


def cuda_driver_present() -> bool:
    """Whether an NVIDIA driver is installed (its ``/proc`` entry or ``nvidia-smi``): a check
    that costs no torch import, for deciding a plan before any job runs."""
    return Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi") is not None


def uses_cuda(device) -> bool:
    """Whether a ``device`` setting resolves to a GPU on this machine; ``"cpu"`` and
    ``"auto"`` without an NVIDIA driver answer without importing CUDA."""
    kind = _kind(device)
    if kind == "cpu" or (kind == "auto" and not cuda_driver_present()):
        return False
    return resolve_device(device).type == "cuda"


@contextlib.contextmanager
def deterministic_algorithms():
    """Torch's deterministic algorithms for the block (an op without one raises), the
    previous mode restored afterwards. On a CUDA device this is what makes a seed give the
    same numbers: index_add_, for one, sums in a fixed order only under it."""
    import torch

    previous = torch.get_deterministic_debug_mode()
    # "error" is use_deterministic_algorithms(True) for eager code, set without that
    # function's import of Inductor (1.1-1.3 s of CPU per process, measured): nothing here is
    # compiled, so Inductor's own deterministic flag has nothing to act on
    torch.set_deterministic_debug_mode("error")
    try:
        yield
    finally:
        torch.set_deterministic_debug_mode(previous)


@contextlib.contextmanager
def deterministic(seed: int, device=None):
    """Seed torch's generators for the block and restore them (and the deterministic
    algorithms flag) afterwards, so a run does not depend on what ran before it.

    Parameters
    ----------
    seed : int
    device : torch.device, optional
        A CUDA device whose generator is seeded and restored too (dropout draws there).
    """
    import torch

    gpus = [device.index or 0] if device is not None and device.type == "cuda" else []
    with torch.random.fork_rng(devices=gpus), deterministic_algorithms():
        torch.manual_seed(int(seed))
        yield

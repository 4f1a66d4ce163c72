"""The one place that imports torchvision.

The pinned torchvision 0.28.0 wheel is a CUDA build. Imported next to the CPU build of torch it
fails while registering fake kernels for ``torchvision::nms``, an operator its missing C++
extension would have defined. When torch has no CUDA (``torch.version.cuda is None``),
:func:`import_torchvision` first defines the schemas of the two operators the Python side
expects (``nms`` and ``qnms``) in a ``torchvision`` library fragment; nothing implements them, so
calling ``torchvision.ops.nms`` would still fail, but fedclust only uses the transforms.

Every module of fedclust that needs torchvision calls :func:`import_torchvision` instead of
``import torchvision``.
"""

from __future__ import annotations

import importlib
import sys
import types

import torch

__all__ = ["import_torchvision"]

# Schemas as torchvision's C++ extension declares them (torchvision/csrc/ops/nms.cpp, qnms.cpp).
_SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}

# Kept alive for the life of the process: a Library's definitions vanish when it is collected.
_fragment: torch.library.Library | None = None


def _defined(name: str) -> bool:
    try:
        getattr(torch.ops.torchvision, name)
    except (AttributeError, RuntimeError):
        return False
    return True


def _define_missing_operators() -> None:
    global _fragment
    missing = [name for name in _SCHEMAS if not _defined(name)]
    if not missing:
        return
    if _fragment is None:
        _fragment = torch.library.Library("torchvision", "FRAGMENT")
    for name in missing:
        _fragment.define(_SCHEMAS[name])


def import_torchvision(submodule: str | None = None) -> types.ModuleType:
    """Import and return ``torchvision``, working around the CUDA wheel on a CPU-only torch.

    Idempotent: later calls return the already imported module.

    Parameters
    ----------
    submodule : str, optional
        Return ``torchvision.<submodule>`` instead (e.g. ``"transforms.v2"``), imported too.

    Raises
    ------
    ImportError
        torchvision is not installed or cannot be imported; the message says how to install the
        pinned version.
    """
    name = "torchvision" if submodule is None else f"torchvision.{submodule}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    if "torchvision" not in sys.modules and torch.version.cuda is None:
        _define_missing_operators()
    try:
        import torchvision  # noqa: F401  (the only direct import of torchvision in fedclust)
    except Exception as exc:  # a broken wheel raises RuntimeError, not only ImportError
        raise ImportError(
            f"cannot import torchvision next to torch {torch.__version__} ({exc}); install the "
            f"pinned versions with `python -m pip install -r requirements.txt`"
        ) from exc
    return importlib.import_module(name)

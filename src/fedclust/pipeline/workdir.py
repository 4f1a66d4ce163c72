"""A copy of the workflow as an installed clone has it, in a directory of its own: the files
Snakemake reads and the compiled kernels the install's ``python -m fedclust.compile`` leaves
beside the sources, no results and no data. The tests run the pipeline in such copies, and
``benchmarks/profiles.py`` times the profiles in one, so that edits to the repository during
a run do not reach it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..runtime.processes import source_first

__all__ = ["WORKFLOW_FILES", "compile_in", "copy_workflow"]

#: What a run of the workflow reads from a clone (``benchmarks/results``: the committed
#: authors'-code tables some claims read).
WORKFLOW_FILES = ("Snakefile", "profiles", "config", "workflow", "src", "environment.yml",
                  "benchmarks/results")


def copy_workflow(repo: Path, dest: Path, *, kernels: bool = True) -> Path:
    """Copy :data:`WORKFLOW_FILES` of the clone ``repo`` into ``dest``.

    Parameters
    ----------
    repo, dest : Path
    kernels : bool, default=True
        Whether numba's cache files (``*.nbi``, ``*.nbc`` and their sources' fingerprint)
        are copied, with the sources' dates, so that numba reuses them (without them every
        copy's first jobs compile the kernels again, a minute or two on 2 cores). A cache
        that many processes filled in their own order can hold kernels whose last bits
        differ from a fresh compile's (``benchmarks/cache_bits.py``): a run that must give
        what a new clone gives copies none and compiles them as the install does
        (:func:`compile_in`). Bytecode and build metadata are never copied. ``profiles``
        stays a link, as in a clone.

    Returns
    -------
    Path
        ``dest``.
    """
    from .._jit import FINGERPRINT, LOCK  # here: importing numba is not free

    repo, dest = Path(repo), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    skipped = ["*.egg-info", "*.pyc"] + ([] if kernels else ["*.nbi", "*.nbc", FINGERPRINT, LOCK])
    for name in WORKFLOW_FILES:
        src, target = repo / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        elif src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns(*skipped))
        elif src.exists():
            shutil.copy2(src, target)
    return dest


def compile_in(workdir: Path) -> None:
    """Compile the kernels of ``workdir``'s own ``src/fedclust`` into the cache beside its
    sources, as the README's set-up does in a clone (``python -m fedclust.compile``)."""
    # the copy's sources first on the path, before any editable install's (as the Flower
    # launcher hands its processes the running checkout)
    subprocess.run([sys.executable, "-m", "fedclust.compile"], cwd=workdir, check=True,
                   env=source_first(Path(workdir, "src").resolve()))

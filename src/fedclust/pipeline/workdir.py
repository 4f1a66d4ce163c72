"""A copy of the workflow as an installed clone has it, in a directory of its own: the files
Snakemake reads and the compiled kernels the install's ``python -m fedclust.compile`` leaves
beside the sources, no results and no data. The tests run the pipeline in such copies, and
``benchmarks/profiles.py`` times the profiles in one, so that edits to the repository during
a run do not reach it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["WORKFLOW_FILES", "copy_workflow"]

#: What a run of the workflow reads from a clone (``benchmarks/results``: the committed
#: authors'-code tables some claims read).
WORKFLOW_FILES = ("Snakefile", "profiles", "config", "workflow", "src", "environment.yml",
                  "benchmarks/results")


def copy_workflow(repo: Path, dest: Path) -> Path:
    """Copy :data:`WORKFLOW_FILES` of the clone ``repo`` into ``dest``.

    Numba's cache files (``*.nbi``, ``*.nbc``) are copied, with the sources' dates, so that
    numba reuses them (without them every copy's first jobs compile the kernels again, a
    minute or two on 2 cores); bytecode and build metadata are not. ``profiles`` stays a
    link, as in a clone.

    Returns
    -------
    Path
        ``dest``.
    """
    repo, dest = Path(repo), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src, target = repo / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        elif src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("*.egg-info", "*.pyc"))
        elif src.exists():
            shutil.copy2(src, target)
    return dest

"""Make this checkout's ``src/fedclust`` the one every job imports, installed or not.

Snakemake puts this folder on ``sys.path`` for the scripts it runs, so ``import _bootstrap`` works
locally, on SLURM nodes and inside conda environments alike. The checkout's ``src`` goes first
even when it is already on the path: a job inherits the main process's path, where an editable
install of another checkout (its ``.pth`` entry) can stand before it, and would otherwise run
that checkout's code. A job also stops when the Snakemake that started it is gone
(:func:`fedclust.pipeline.lock.stop_with_snakemake`).
"""

import sys
from pathlib import Path

#: The checkout the jobs run (its commit goes into results/run_config.yaml): known here, so
#: no rule passes an absolute path as a parameter (a copied run would rerun on it)
CHECKOUT = Path(__file__).resolve().parents[2]
_SRC = str(CHECKOUT / "src")
if Path(_SRC).is_dir():
    sys.path[:] = [_SRC] + [p for p in sys.path if p != _SRC]

# a job whose Snakemake was killed outright (kill -9) stops instead of writing on behind it
from fedclust.pipeline.lock import stop_with_snakemake  # noqa: E402

stop_with_snakemake()

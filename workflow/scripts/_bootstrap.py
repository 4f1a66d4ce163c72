"""Make ``src/fedclust`` importable in every job, installed or not.

Snakemake puts this folder on ``sys.path`` for the scripts it runs, so ``import _bootstrap`` works
locally, on SLURM nodes and inside conda environments alike.
"""

import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parents[2] / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

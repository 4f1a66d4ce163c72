"""The pipeline's names, on the ground floor: what the experiments, the workflow's catalogue
(:mod:`fedclust.pipeline`), the summaries, plots and claims all call a thing.

Imports nothing (the Snakefile reads it at parse time, the numeric code at run time), so any
layer can import it and no import circle goes through it.
"""

from __future__ import annotations

__all__ = ["ALGORITHMS", "LKM_INIT_FILE_NAMES", "LKM_FIG4_SWEEPS"]

#: The algorithm families as every table names them (``algorithm`` column), in the order
#: tables and legends list them; a family's configurations are its ``variant``.
ALGORITHMS = ("centralized", "kfed", "distributed_lloyd", "localkmeans", "coreset",
              "fedkmeans")

#: LocalKMeans: how an initialization is spelled in file names.
LKM_INIT_FILE_NAMES = {"k-means++": "kmeanspp", "perturbed": "perturbed"}
#: LocalKMeans: Figure 4's sweeps (App. B.2).
LKM_FIG4_SWEEPS = ("snr", "n_clusters", "n_machines")

"""LocalKMeans on one real data set (Figures 2 and 3) -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import numpy as np

from fedclust.experiments._seeds import run_seed
from fedclust.experiments.datasets import DATASETS, read_prepared
from fedclust.experiments.localkmeans import trajectory_runs
from fedclust.io import log_to_file, write_table

log = log_to_file(snakemake.log[0])
cfg = snakemake.params.settings
data = read_prepared(snakemake.input[0])
X = data.X.astype(np.float64)
_, y = np.unique(data.y, return_inverse=True)
M = cfg["n_machines"]
per = cfg.get("samples_per_machine")
take = M * per if per and M * per < len(X) else len(X)
log.info("%s: %d machines x %s rows (%d of %d rows), k=%d", data.description, M,
         per if take < len(X) else "all", take, len(X), y.max() + 1)


def factory(rng):
    # each trial draws its own rows when the data set has more than M x samples_per_machine
    rows = np.sort(rng.choice(len(X), size=take, replace=False)) if take < len(X) else \
        np.arange(len(X))
    return X[rows], y[rows], None


table = trajectory_runs(X_factory=factory, local_steps=cfg["local_steps"], n_iter=cfg["n_iter"],
                        n_machines=M, trials=cfg["trials"],
                        base_seed=run_seed(snakemake.params.seed,
                                           DATASETS.index(snakemake.wildcards.dataset)),
                        init=cfg.get("init", "k-means++"),
                        keys={"dataset": data.name, "n_rows": take})
table.insert(1, "data", data.description)  # what the numbers were computed on
write_table(table, snakemake.output[0])
log.info("wrote %d rows to %s", len(table), snakemake.output[0])

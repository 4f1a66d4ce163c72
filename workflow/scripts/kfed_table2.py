"""k-FED Table 2: one cell (Z devices, k', method) on rotated MNIST -> tidy CSV."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

# imports torch before the job sets its thread count
from fedclust.data.mnist import load_mnist
from fedclust.experiments.kfed_applications import table2_runs
from fedclust.io import write_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    w = snakemake.wildcards
    root = Path(snakemake.input[0]).parent
    table = table2_runs(load_mnist(root, "train"), load_mnist(root, "test"),
                        n_devices=int(w.n_devices), device_clusters=int(w.device_clusters),
                        method=w.method, cfg=snakemake.params.settings,
                        base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

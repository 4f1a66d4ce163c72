"""Federated k-means, Figs 1-5: one hyper-parameter sweep -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.fedkmeans.experiments import sweep_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    sweep = snakemake.wildcards.sweep
    log.info("sweep %s: %s", sweep, snakemake.params.spec)
    table = sweep_runs(sweep, snakemake.params.spec, snakemake.params.settings,
                       base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

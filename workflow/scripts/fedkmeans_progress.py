"""Federated k-means, Figs 6-7: one run's centroids round by round -> CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.fedkmeans.experiments import progress_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    run = snakemake.wildcards.run
    log.info("progress run %s: %s", run, snakemake.params.spec)
    table = progress_runs(run, snakemake.params.spec, snakemake.params.settings,
                          base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

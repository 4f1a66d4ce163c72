"""LocalKMeans Figure 4, one sweep (SNR, K or M) -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.localkmeans.experiments import fig4_sweep
from fedclust.pipeline.job import job

with job(snakemake) as log:
    table = fig4_sweep(snakemake.wildcards.sweep, snakemake.params.synthetic,
                       snakemake.params.settings, base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

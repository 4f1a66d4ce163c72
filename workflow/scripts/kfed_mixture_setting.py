"""All runs of one (d, k) setting of k-FED's Table 1 or Figure 1 -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.kfed.synthetic import run_setting
from fedclust.pipeline.job import job

with job(snakemake) as log:
    table = run_setting(snakemake.wildcards.mixture_experiment, snakemake.params.settings,
                        n_features=int(snakemake.wildcards.d),
                        n_clusters=int(snakemake.wildcards.k), base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

"""LocalKMeans on one real data set (Figures 2 and 3) -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.prepared import read_prepared
from fedclust.io import write_table
from fedclust.papers.localkmeans.experiments import real_data_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    data = read_prepared(snakemake.input[0])
    log.info("%s: %s", data.description, snakemake.params.settings)
    table = real_data_runs(data, snakemake.params.settings, base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

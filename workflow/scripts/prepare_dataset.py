"""Prepare one data set's feature matrix (data/<name>/features.h5)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.prepared import prepare, write_prepared
from fedclust.pipeline.job import job

with job(snakemake) as log:
    data = prepare(snakemake.wildcards.dataset, list(snakemake.input), snakemake.params.settings,
                   seed=snakemake.params.seed)
    write_prepared(data, snakemake.output[0])
    log.info("%s: X %s -> %s", data.description, data.X.shape, snakemake.output[0])

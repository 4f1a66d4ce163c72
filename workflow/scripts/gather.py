"""Concatenate the per-setting parts of a results table into one tidy table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import concat_tables, read_table, write_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    parts = list(snakemake.input)
    table = concat_tables([read_table(p, required=("metric", "value")) for p in parts], parts)
    write_table(table, snakemake.output[0])
    log.info("merged %d tables, %d rows -> %s", len(parts), len(table), snakemake.output[0])

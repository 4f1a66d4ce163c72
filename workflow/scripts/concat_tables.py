"""Concatenate tidy tables with the same columns into one."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

import pandas as pd

from fedclust.io import log_to_file, read_table, write_table

log = log_to_file(snakemake.log[0])
tables = [read_table(path, required=("metric", "value")) for path in snakemake.input]
columns = list(tables[0].columns)
for path, table in zip(snakemake.input, tables):
    if list(table.columns) != columns:
        raise ValueError(f"{path}: columns {list(table.columns)} differ from {columns}")
merged = pd.concat(tables, ignore_index=True)
write_table(merged, snakemake.output[0])
log.info("merged %d tables, %d rows -> %s", len(tables), len(merged), snakemake.output[0])

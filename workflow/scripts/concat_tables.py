"""Concatenate tidy tables with the same columns (in any order) into one."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.io import log_to_file, read_table, write_table

log = log_to_file(snakemake.log[0])
tables = [read_table(path, required=("metric", "value")) for path in snakemake.input]
columns = list(tables[0].columns)
for path, table in zip(snakemake.input, tables, strict=True):
    if set(table.columns) != set(columns):
        raise ValueError(f"{path}: columns {sorted(table.columns)} differ from "
                         f"{sorted(columns)} ({snakemake.input[0]})")
merged = pd.concat([table[columns] for table in tables], ignore_index=True)
write_table(merged, snakemake.output[0])
log.info("merged %d tables, %d rows -> %s", len(tables), len(merged), snakemake.output[0])

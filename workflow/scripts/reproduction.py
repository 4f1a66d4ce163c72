"""Gather every paper's claims into results/reproduction.csv and results/reproduction.md."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.io import log_to_file, read_table
from fedclust.reproduction import CLAIM_COLUMNS, write_reproduction

log = log_to_file(snakemake.log[0])
tables = [read_table(path, required=CLAIM_COLUMNS) for path in snakemake.input]
claims = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=CLAIM_COLUMNS)
write_reproduction(claims, snakemake.output.csv, snakemake.output.md,
                   profile=snakemake.params.profile)
log.info("%d claims: %s", len(claims), claims["status"].value_counts().to_dict())

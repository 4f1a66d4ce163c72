"""Gather every paper's claims into results/reproduction.csv and results/reproduction.md."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import read_table
from fedclust.pipeline.job import job
from fedclust.reproduction import CLAIM_COLUMNS, gather_claims, write_reproduction

with job(snakemake) as log:
    claims = gather_claims([read_table(path, required=CLAIM_COLUMNS) for path in snakemake.input])
    write_reproduction(claims, snakemake.output.csv, snakemake.output.md,
                       profile=snakemake.params.profile, declared=snakemake.params.declared)
    log.info("%d claims: %s", len(claims), claims["status"].value_counts().to_dict())

"""k-FED's reproduced numbers against the paper's values -> claims table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table, write_table
from fedclust.reproduction import (
    claims_table,
    fig2_claims,
    fig3_claims,
    load_targets,
    separation_claims,
    table1_claims,
)

log = log_to_file(snakemake.log[0])
targets = load_targets(snakemake.input.targets)
claims = table1_claims(read_table(snakemake.input.table1), targets)
separation = [snakemake.input.separation] if isinstance(snakemake.input.separation, str) \
    else snakemake.input.separation
for path in separation:
    claims += separation_claims(read_table(path), targets)
if "fig2" in snakemake.input.keys():
    claims += fig2_claims(read_table(snakemake.input.fig2), targets)
if "fig3" in snakemake.input.keys():
    claims += fig3_claims(read_table(snakemake.input.fig3), targets)
write_table(claims_table(claims), snakemake.output[0])
log.info("%d claims", len(claims))

"""k-FED's reproduced numbers against the paper's values -> claims table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table, write_table
from fedclust.reproduction import claims_table, load_targets, separation_claims, table1_claims

log = log_to_file(snakemake.log[0])
targets = load_targets(snakemake.input.targets)
claims = table1_claims(read_table(snakemake.input.table1), targets)
claims += separation_claims(read_table(snakemake.input.separation), targets)
write_table(claims_table(claims), snakemake.output[0])
log.info("%d claims", len(claims))

"""LocalKMeans' reproduced claims on real data -> claims table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table, write_table
from fedclust.reproduction import claims_table, load_targets, localkmeans_claims

log = log_to_file(snakemake.log[0])
claims = localkmeans_claims(read_table(snakemake.input.real), load_targets(snakemake.input.targets))
write_table(claims_table(claims), snakemake.output[0])
log.info("%d claims", len(claims))

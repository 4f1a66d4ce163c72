"""A paper's reproduced numbers against its printed ones -> claims table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import read_table, write_table
from fedclust.pipeline import registry
from fedclust.pipeline.job import job
from fedclust.reproduction import claims_table, load_targets

with job(snakemake) as log:
    tables = {name: read_table(path) for name, path in snakemake.input.items()
              if name != "targets"}
    claims = registry.check_claims(snakemake.wildcards.paper, tables,
                                   load_targets(snakemake.input.targets),
                                   snakemake.params.declared, snakemake.config)
    write_table(claims_table(claims), snakemake.output[0])
    log.info("%d claims from %s", len(claims), sorted(tables))

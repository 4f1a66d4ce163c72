"""Write the run's resolved configuration, package versions and provenance."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import run_config_text, write_text
from fedclust.pipeline.job import job

with job(snakemake) as log:
    write_text(run_config_text(dict(snakemake.params.config), snakemake.params.checkout),
               snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])

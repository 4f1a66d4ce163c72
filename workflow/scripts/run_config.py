"""Write the run's resolved configuration, package versions and provenance."""

import _bootstrap  # puts src/ on sys.path; knows the checkout

from fedclust.io import run_config_text, write_text
from fedclust.pipeline.job import job

with job(snakemake) as log:
    write_text(run_config_text(dict(snakemake.params.config), _bootstrap.CHECKOUT),
               snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])

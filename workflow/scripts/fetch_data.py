"""Fetch a data set's files (official URLs or the offline mirror), checksums verified."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.pipeline import data
from fedclust.pipeline.job import job

with job(snakemake) as log:
    log.info("%s from %s", snakemake.rule,
             snakemake.config["data_mirror"] or "the official URLs")
    for path in data.fetch(snakemake.rule, snakemake.config):
        log.info("verified %s", path)

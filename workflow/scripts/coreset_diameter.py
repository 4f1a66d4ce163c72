"""Distributed coresets beyond the paper: one square grid of the diameter sweep -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.coreset.experiments import diameter_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    w = snakemake.wildcards
    log.info("%s, %sx%s grid", w.cdata, w.side, w.side)
    table = diameter_table(w.cdata, int(w.side), next(iter(snakemake.input.features), None),
                           snakemake.input.baseline, snakemake.params.settings,
                           base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

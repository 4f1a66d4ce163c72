"""Distributed coresets: Lloyd on the global data, one run -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.coreset.experiments import baseline_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    w = snakemake.wildcards
    log.info("%s (%s): run %s", w.cdata, w.objective, w.run)
    table = baseline_table(w.cdata, w.objective, next(iter(snakemake.input), None),
                           snakemake.params.settings, runs=[int(w.run)],
                           base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

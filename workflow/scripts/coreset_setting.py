"""Distributed coresets, Figs 2-3 (or the k-median panel): one graph and partition -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.experiments.coreset import setting_table
from fedclust.io import write_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    w = snakemake.wildcards
    log.info("%s (%s), %s sites, %s graph, %s partition", w.cdata, w.objective, w.sites,
             w.graph, w.partition)
    table = setting_table(w.cdata, w.objective, next(iter(snakemake.input.features), None),
                          snakemake.input.baseline, snakemake.params.settings, graph=w.graph,
                          n_sites=int(w.sites), partition=w.partition,
                          base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

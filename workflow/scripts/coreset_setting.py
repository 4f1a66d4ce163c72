"""Distributed coresets, Figs 2-3 (or the k-median panel): a partition on its graphs -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.coreset.experiments import setting_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    w = snakemake.wildcards
    graphs = list(snakemake.params.graphs)
    runs = range(int(w.first), int(w.last) + 1)
    log.info("%s (%s), %s sites, %s partition on %s, runs %s-%s", w.cdata, w.objective,
             w.sites, w.partition, ", ".join(graphs), w.first, w.last)
    table = setting_table(w.cdata, w.objective, next(iter(snakemake.input.features), None),
                          snakemake.input.baseline, snakemake.params.settings, graphs=graphs,
                          n_sites=int(w.sites), partition=w.partition,
                          base_seed=snakemake.params.seed, runs=runs)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

"""Federated k-means beyond the paper: natural clients of one real data set -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.prepared import read_prepared
from fedclust.io import write_table
from fedclust.papers.comparison.experiments import natural_client_runs
from fedclust.papers.kfed.separation import select_oracle
from fedclust.pipeline.job import job

with job(snakemake) as log:
    data = read_prepared(snakemake.input.features)
    _, centers, attrs = select_oracle(snakemake.input.oracles, n_clusters="chosen",
                                      chosen=snakemake.input.chosen)
    log.info("%s: k=%d from the separation analysis, oracle cost %.6g", data.description,
             len(centers), attrs["cost"])
    table = natural_client_runs(data.X, data.devices, attrs["cost"], len(centers),
                                snakemake.params.settings, dataset=data.name,
                                base_seed=snakemake.params.seed)
    table.insert(1, "data", data.description)
    table.insert(2, "data_title", data.title)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

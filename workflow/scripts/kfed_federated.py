"""One k-FED experiment on real federated data (Fig 2, Fig 3 or beyond the paper) -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.prepared import read_prepared
from fedclust.io import write_table
from fedclust.papers.kfed.federated import Oracle, run_experiment
from fedclust.papers.kfed.separation import select_oracle
from fedclust.pipeline.job import job

with job(snakemake) as log:
    experiment, cfg = snakemake.params.experiment, snakemake.params.settings
    data = read_prepared(snakemake.input.features)
    labels, centers, attrs = select_oracle(snakemake.input.oracles, n_clusters=cfg["n_clusters"],
                                           chosen=snakemake.input.get("chosen"))
    oracle = Oracle(labels, centers, attrs["cost"])
    log.info("%s on %s: oracle k=%d (cost %.6g)", experiment, data.description,
             oracle.n_clusters, oracle.cost)
    table = run_experiment(experiment, data, oracle, cfg, base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

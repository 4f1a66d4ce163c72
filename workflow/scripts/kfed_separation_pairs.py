"""c_rs of every pair of oracle clusters of a data set -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.prepared import read_prepared
from fedclust.io import write_table
from fedclust.papers.kfed.separation import pairs_table, read_oracle
from fedclust.pipeline.job import job

with job(snakemake) as log:
    cfg = snakemake.params.settings
    data = read_prepared(snakemake.input.features)
    labels, _, attrs = read_oracle(snakemake.input.oracle)
    pairs = pairs_table(data.X, labels, device_clusters=cfg["device_clusters"],
                        devices_per_cluster=cfg["devices_per_cluster"],
                        oracle_cost=attrs["cost"], oracle_iterations=attrs["n_iter"],
                        dataset=data.name, data_title=data.title)
    write_table(pairs, snakemake.output[0])
    log.info("%s k=%s: %d pairs, median c_rs %.3f", data.name, snakemake.wildcards.k,
             len(pairs), pairs["value"].median())

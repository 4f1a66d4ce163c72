"""Oracle clustering of a data set with k clusters (k-means on all of it), then the c_rs of
every pair of its clusters -> the clustering (HDF5) and a tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.centralized import reference_kmeans
from fedclust.data.prepared import read_prepared
from fedclust.io import write_table
from fedclust.papers.kfed.separation import oracle_seed, pairs_table, write_oracle
from fedclust.pipeline.job import job

with job(snakemake) as log:
    cfg, k = snakemake.params.settings, int(snakemake.wildcards.k)
    data = read_prepared(snakemake.input[0])
    log.info("%s: oracle k-means, k=%d, %d restarts", data.description, k, cfg["oracle_n_init"])
    result = reference_kmeans(data.X, k, seed=oracle_seed(snakemake.params.seed, data.name, k),
                              n_init=cfg["oracle_n_init"], max_iter=cfg["oracle_max_iter"],
                              desc=f"oracle k-means {data.name} k={k}")
    write_oracle(result, snakemake.output.oracle)
    log.info("cost %.6g after %d iterations (converged: %s)", result.inertia, result.n_iter,
             result.converged)
    # the values as stored in the file (what a reader of it gets back)
    pairs = pairs_table(data.X, result.labels.astype("int64"),
                        device_clusters=cfg["device_clusters"],
                        devices_per_cluster=cfg["devices_per_cluster"],
                        oracle_cost=float(result.inertia), oracle_iterations=int(result.n_iter),
                        dataset=data.name, data_title=data.title)
    write_table(pairs, snakemake.output.pairs)
    log.info("%s k=%d: %d pairs, median c_rs %.3f", data.name, k, len(pairs),
             pairs["value"].median())

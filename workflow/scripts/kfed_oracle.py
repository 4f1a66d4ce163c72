"""Oracle clustering of a data set with k clusters (k-means on all of it)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.centralized import reference_kmeans
from fedclust.data.prepared import read_prepared
from fedclust.papers.kfed.separation import oracle_seed, write_oracle
from fedclust.pipeline.job import job

with job(snakemake) as log:
    cfg, k = snakemake.params.settings, int(snakemake.wildcards.k)
    data = read_prepared(snakemake.input[0])
    log.info("%s: oracle k-means, k=%d, %d restarts", data.description, k, cfg["oracle_n_init"])
    result = reference_kmeans(data.X, k, seed=oracle_seed(snakemake.params.seed, data.name, k),
                              n_init=cfg["oracle_n_init"], max_iter=cfg["oracle_max_iter"],
                              desc=f"oracle k-means {data.name} k={k}")
    write_oracle(result, snakemake.output[0])
    log.info("cost %.6g after %d iterations (converged: %s)", result.inertia, result.n_iter,
             result.converged)

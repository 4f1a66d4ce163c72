"""Oracle clustering of a data set with k clusters (k-means on all of it)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.experiments._seeds import run_seed
from fedclust.experiments.datasets import read_prepared
from fedclust.experiments.separation import oracle_kmeans, write_oracle
from fedclust.io import log_to_file

log = log_to_file(snakemake.log[0])
cfg = snakemake.params.settings
k = int(snakemake.wildcards.k)
data = read_prepared(snakemake.input[0])
log.info("%s: oracle k-means, k=%d, %d restarts", data.description, k,
         cfg.get("oracle_n_init", 1))
result = oracle_kmeans(data.X, k, seed=run_seed(snakemake.params.seed, k),
                       n_init=cfg.get("oracle_n_init", 1),
                       max_iter=cfg.get("oracle_max_iter", 300))
write_oracle(result, snakemake.output[0])
log.info("cost %.6g after %d iterations (converged: %s)", result.inertia, result.n_iter,
         result.converged)

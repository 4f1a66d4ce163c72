"""Oracle clustering of MNIST with k clusters and the c_rs of every pair -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from pathlib import Path

import numpy as np

from fedclust.data.mnist import load_mnist
from fedclust.experiments._seeds import run_seed
from fedclust.experiments.separation import separation_pairs
from fedclust.io import log_to_file, write_table

log = log_to_file(snakemake.log[0])
cfg = snakemake.params.settings
k = int(snakemake.wildcards.k)
X, _ = load_mnist(Path(snakemake.input[0]).parent, split=cfg.get("split", "all"))
if cfg.get("max_samples") and cfg["max_samples"] < len(X):
    # the same subsample for every k, drawn from the configured seed
    rows = np.random.default_rng(run_seed(snakemake.params.seed, 0)).choice(
        len(X), size=cfg["max_samples"], replace=False)
    X = X[np.sort(rows)]
log.info("MNIST %s: %d images; oracle k-means with k=%d", cfg.get("split", "all"), len(X), k)
pairs = separation_pairs(
    X, k,
    device_clusters=cfg["device_clusters"],
    devices_per_cluster=cfg["devices_per_cluster"],
    base_seed=snakemake.params.seed,
    n_init=cfg.get("oracle_n_init", 1),
    max_iter=cfg.get("oracle_max_iter", 300),
    dataset="MNIST",
)
write_table(pairs, snakemake.output[0])
log.info("k=%d: %d pairs, median c_rs %.3f", k, len(pairs), pairs["value"].median())

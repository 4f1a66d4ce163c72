"""Prepare one data set's feature matrix (data/<name>/features.h5)."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.experiments.datasets import (
    prepare_femnist,
    prepare_mnist,
    prepare_postures,
    prepare_shakespeare,
    write_prepared,
)
from fedclust.io import log_to_file

log = log_to_file(snakemake.log[0])
name = snakemake.wildcards.dataset
cfg = snakemake.params.settings
seed = snakemake.params.seed
if name == "mnist":
    data = prepare_mnist(Path(snakemake.input[0]).parent, split=cfg.get("split", "all"),
                         max_samples=cfg.get("max_samples"), seed=seed)
elif name == "femnist":
    if all(p.endswith(".h5") for p in snakemake.input):  # TFF's release (source tff / auto)
        train = [p for p in snakemake.input if p.endswith("_train.h5")][0]
        data = prepare_femnist(tff_h5=train, max_writers=cfg.get("max_writers"), seed=seed)
    else:
        dirs = sorted({str(Path(p).parent.parent) for p in snakemake.input})
        data = prepare_femnist(leaf_dirs=dirs, split=cfg.get("split", "all"),
                               max_writers=cfg.get("max_writers"), seed=seed)
elif name == "shakespeare":
    data = prepare_shakespeare(snakemake.input[0], n_users=cfg.get("n_users", 109),
                               max_samples_per_user=cfg.get("max_samples_per_user", 2000),
                               min_samples=cfg.get("min_samples", 100), seed=seed)
elif name == "postures":
    data = prepare_postures(snakemake.input[0], max_missing=cfg.get("max_missing", 0.5),
                            standardize=cfg.get("standardize", False))
else:
    raise ValueError(f"unknown data set {name!r}")
write_prepared(data, snakemake.output[0])
log.info("%s: X %s -> %s", data.description, data.X.shape, snakemake.output[0])

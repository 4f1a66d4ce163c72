"""Decode CIFAR-10 (official batches or the mirror's JPEG tar) into uint8 arrays (HDF5)."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.cifar10 import load_cifar10
from fedclust.pipeline.job import job

with job(snakemake) as log:
    source = snakemake.params.source
    first = Path(snakemake.input[0])
    root = first.parent if source == "jpeg" else first.parent.parent
    data = load_cifar10(root, source=source, cache=snakemake.output[0])
    log.info("CIFAR-10 from %s: train %s, test %s -> %s", data.source, data.X_train.shape,
             data.X_test.shape, snakemake.output[0])

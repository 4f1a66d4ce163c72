"""Fetch a data set's files (official URLs or the offline mirror), checksums verified."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.data.cifar10 import fetch_cifar10_jpeg, fetch_cifar10_python
from fedclust.data.femnist import fetch_tff_emnist
from fedclust.data.mnist import fetch_mnist
from fedclust.data.postures import fetch_postures_subset, fetch_postures_uci
from fedclust.data.shakespeare import fetch_shakespeare
from fedclust.io import log_to_file

FETCHERS = {
    "fetch_mnist": lambda root, mirror: fetch_mnist(root, mirror=mirror),
    "fetch_shakespeare": lambda root, mirror: fetch_shakespeare(root, mirror=mirror),
    "fetch_tff_emnist": lambda root, mirror: fetch_tff_emnist(root, mirror=mirror),
    "fetch_postures": lambda root, mirror: (
        fetch_postures_subset(root, mirror=mirror) if snakemake.params.source == "subset"
        else fetch_postures_uci(root, mirror=mirror)),
    "fetch_cifar10": lambda root, mirror: (
        fetch_cifar10_jpeg(root, mirror=mirror) if snakemake.params.source == "jpeg"
        else fetch_cifar10_python(root, mirror=mirror)),
}

log = log_to_file(snakemake.log[0])
root = Path(snakemake.output[0]).parent
if snakemake.rule == "fetch_cifar10" and snakemake.params.source == "official":
    root = root.parent  # the batches live in <root>/cifar-10-batches-py/
mirror = snakemake.params.mirror
log.info("%s into %s from %s", snakemake.rule, root, mirror or "the official URLs")
result = FETCHERS[snakemake.rule](root, mirror)
log.info("verified: %s", result)
for path in snakemake.output:
    if not Path(path).is_file():
        raise FileNotFoundError(f"{snakemake.rule} did not produce {path}")

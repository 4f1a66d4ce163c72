"""Fetch a data set's files (official URLs or the offline mirror), checksums verified."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from pathlib import Path

from fedclust.data.femnist import fetch_tff_emnist
from fedclust.data.mnist import fetch_mnist
from fedclust.data.shakespeare import fetch_shakespeare
from fedclust.io import log_to_file

FETCHERS = {
    "fetch_mnist": lambda root, mirror: fetch_mnist(root, mirror=mirror),
    "fetch_shakespeare": lambda root, mirror: fetch_shakespeare(root, mirror=mirror),
    "fetch_tff_emnist": lambda root, mirror: fetch_tff_emnist(root, mirror=mirror),
}

log = log_to_file(snakemake.log[0])
root = Path(snakemake.output[0]).parent
mirror = snakemake.params.mirror
log.info("%s into %s from %s", snakemake.rule, root, mirror or "the official URLs")
result = FETCHERS[snakemake.rule](root, mirror)
log.info("verified: %s", result)
for path in snakemake.output:
    if not Path(path).is_file():
        raise FileNotFoundError(f"{snakemake.rule} did not produce {path}")

"""Fetch the four MNIST files (official URLs or the offline mirror), checksums verified."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from pathlib import Path

from fedclust.data.mnist import fetch_mnist
from fedclust.io import log_to_file

log = log_to_file(snakemake.log[0])
root = Path(snakemake.output[0]).parent
mirror = snakemake.params.mirror
log.info("fetching MNIST into %s from %s", root, mirror or "the official URLs")
paths = fetch_mnist(root, mirror=mirror)
log.info("verified: %s", ", ".join(str(p) for p in paths.values()))

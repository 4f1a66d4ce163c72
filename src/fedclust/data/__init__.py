"""Data sets: one module per data set, plus the mirror/download/checksum helper.

Every loader knows its official URLs and checksums (:mod:`fedclust.data.download`); with an
offline mirror it reads the same files from that folder and verifies the same checksums.
"""

from .download import ChecksumError, DataUnavailableError, RemoteFile, fetch, verify_file
from .gaussian_mixture import SeparatedMixture, make_separated_mixture
from .mnist import MNIST_FILES, fetch_mnist, load_mnist

__all__ = [
    "ChecksumError",
    "DataUnavailableError",
    "MNIST_FILES",
    "RemoteFile",
    "SeparatedMixture",
    "fetch",
    "fetch_mnist",
    "load_mnist",
    "make_separated_mixture",
    "verify_file",
]

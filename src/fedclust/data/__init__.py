"""Data sets: one module per data set, plus the mirror/download/checksum helper.

Every loader knows its official URLs and checksums (:mod:`fedclust.data.download`); with an
offline mirror it reads the same files from that folder and verifies the same checksums.
Processed arrays are cached as HDF5 (:mod:`fedclust.data.cache`).
"""

from .cifar10 import (
                      CIFAR10_CLASSES,
                      CIFAR10_FILES,
                      CIFAR10_SOURCES,
                      Cifar10Data,
                      Cifar10FormatError,
                      cache_cifar10,
                      fetch_cifar10_jpeg,
                      fetch_cifar10_python,
                      load_cifar10,
                      load_cifar10_cache,
                      read_cifar10_batch,
                      read_cifar10_jpeg_tar,
                      read_cifar10_python,
)
from .download import ChecksumError, DataUnavailableError, RemoteFile, fetch, verify_file
from .femnist import (
                      TFF_EMNIST_FILES,
                      FederatedImages,
                      FemnistFormatError,
                      cache_femnist,
                      fetch_tff_emnist,
                      leaf_femnist_dirs,
                      load_femnist_cache,
                      load_leaf_femnist,
                      load_tff_emnist_h5,
)
from .gaussian_mixture import SeparatedMixture, make_separated_mixture
from .mnist import MNIST_FILES, fetch_mnist, load_mnist
from .postures import (
                      POSTURES_SUBSET,
                      PosturesData,
                      fetch_postures_subset,
                      load_postures,
                      postures_features,
)
from .shakespeare import (
                      SHAKESPEARE_RAW,
                      FederatedText,
                      ShakespeareUsers,
                      build_shakespeare_dataset,
                      cache_shakespeare,
                      fetch_shakespeare,
                      leaf_users,
                      load_shakespeare_cache,
                      load_shakespeare_users,
                      parse_plays,
                      sample_users,
)

__all__ = [
    "CIFAR10_CLASSES",
    "CIFAR10_FILES",
    "CIFAR10_SOURCES",
    "Cifar10Data",
    "Cifar10FormatError",
    "POSTURES_SUBSET",
    "PosturesData",
    "cache_cifar10",
    "fetch_cifar10_jpeg",
    "fetch_cifar10_python",
    "fetch_postures_subset",
    "load_cifar10",
    "load_cifar10_cache",
    "load_postures",
    "postures_features",
    "read_cifar10_batch",
    "read_cifar10_jpeg_tar",
    "read_cifar10_python",
    "ChecksumError",
    "DataUnavailableError",
    "FederatedImages",
    "FederatedText",
    "FemnistFormatError",
    "MNIST_FILES",
    "RemoteFile",
    "SHAKESPEARE_RAW",
    "SeparatedMixture",
    "ShakespeareUsers",
    "TFF_EMNIST_FILES",
    "build_shakespeare_dataset",
    "cache_femnist",
    "cache_shakespeare",
    "fetch",
    "fetch_mnist",
    "fetch_shakespeare",
    "fetch_tff_emnist",
    "leaf_femnist_dirs",
    "leaf_users",
    "load_femnist_cache",
    "load_leaf_femnist",
    "load_mnist",
    "load_shakespeare_cache",
    "load_shakespeare_users",
    "load_tff_emnist_h5",
    "make_separated_mixture",
    "parse_plays",
    "sample_users",
    "verify_file",
]

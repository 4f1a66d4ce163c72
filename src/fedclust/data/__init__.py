"""Data sets: one module per data set, plus the mirror/download/checksum helper.

Every loader knows its official URLs and checksums (:mod:`fedclust.data.download`); with an
offline mirror it reads the same files from that folder and verifies the same checksums.
Processed arrays are cached as HDF5 (:mod:`fedclust.data.cache`).
"""

from importlib import import_module

_EXPORTS = {
    "CIFAR10_CLASSES": "cifar10",
    "CIFAR10_FILES": "cifar10",
    "CIFAR10_PYTHON_BATCHES": "cifar10",
    "CIFAR10_SOURCES": "cifar10",
    "ChecksumError": "download",
    "Cifar10Data": "cifar10",
    "Cifar10FormatError": "cifar10",
    "DataUnavailableError": "download",
    "FederatedImages": "femnist",
    "FederatedText": "shakespeare",
    "FemnistFormatError": "femnist",
    "MNIST_FILES": "mnist",
    "POSTURES_CSV": "postures",
    "POSTURES_SUBSET": "postures",
    "PosturesData": "postures",
    "RemoteFile": "download",
    "SHAKESPEARE_RAW": "shakespeare",
    "SeparatedMixture": "gaussian_mixture",
    "ShakespeareUsers": "shakespeare",
    "TFF_EMNIST_FILES": "femnist",
    "TFF_EMNIST_H5": "femnist",
    "YEAR_PREDICTION": "year_prediction",
    "build_shakespeare_dataset": "shakespeare",
    "cache_cifar10": "cifar10",
    "cache_femnist": "femnist",
    "cache_shakespeare": "shakespeare",
    "fetch": "download",
    "fetch_cifar10_jpeg": "cifar10",
    "fetch_cifar10_python": "cifar10",
    "fetch_mnist": "mnist",
    "fetch_postures_subset": "postures",
    "fetch_shakespeare": "shakespeare",
    "fetch_tff_emnist": "femnist",
    "fetch_year_prediction": "year_prediction",
    "leaf_femnist_dirs": "femnist",
    "leaf_users": "shakespeare",
    "load_cifar10": "cifar10",
    "load_cifar10_cache": "cifar10",
    "load_femnist_cache": "femnist",
    "load_leaf_femnist": "femnist",
    "load_mnist": "mnist",
    "load_postures": "postures",
    "load_shakespeare_cache": "shakespeare",
    "load_shakespeare_users": "shakespeare",
    "load_tff_emnist_h5": "femnist",
    "load_year_prediction": "year_prediction",
    "make_separated_mixture": "gaussian_mixture",
    "mixture_groups": "gaussian_mixture",
    "parse_plays": "shakespeare",
    "postures_features": "postures",
    "read_cifar10_batch": "cifar10",
    "read_cifar10_jpeg_tar": "cifar10",
    "read_cifar10_python": "cifar10",
    "sample_users": "shakespeare",
    "verify_file": "download",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    # modules load on first use: the pipeline registry reads file names without the
    # numerical stack
    if name in _EXPORTS:
        value = getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)

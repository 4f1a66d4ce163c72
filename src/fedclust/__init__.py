"""fedclust: federated and distributed k-means, reproducibly.

Every algorithm is a scikit-learn clusterer fitted with
``fit(X, y=None, *, devices=None, sample_weight=None)``. Names are imported on first use, so
that light modules (the pipeline registry the Snakefile reads) load without the numerical stack.
"""

from importlib import import_module

_EXPORTS = {
    "Communication": "fedclust.communication",
    "DistributedCoreset": "fedclust.algorithms",
    "DistributedLloyd": "fedclust.algorithms",
    "FederatedKMeans": "fedclust.algorithms",
    "Federation": "fedclust.federation",
    "InfeasibleSettingError": "fedclust.exceptions",
    "KFed": "fedclust.algorithms",
    "LocalKMeans": "fedclust.algorithms",
    "Topology": "fedclust.topology",
    "iid_partition": "fedclust.partitions",
    "structured_partition": "fedclust.partitions",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fedclust' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)

"""Federated and distributed k-means estimators, one module per algorithm."""

from ..communication import Communication
from ._base import FederatedClusteringMixin
from .distributed_coreset import DistributedCoreset
from .distributed_lloyd import DistributedLloyd
from .federated_kmeans import FederatedKMeans
from .kfed import KFed
from .local_kmeans import LocalKMeans

__all__ = ["Communication", "DistributedCoreset", "DistributedLloyd", "FederatedClusteringMixin",
           "FederatedKMeans",
           "KFed", "LocalKMeans"]

#: Every estimator of the library; tests/test_common.py runs the shared contract on each.
ESTIMATORS = (KFed, DistributedLloyd, LocalKMeans, DistributedCoreset, FederatedKMeans)

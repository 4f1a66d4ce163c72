"""Federated and distributed k-means estimators, one module per algorithm."""

from ._base import Communication, FederatedClusteringMixin
from .distributed_lloyd import DistributedLloyd
from .kfed import KFed
from .local_kmeans import LocalKMeans

__all__ = ["Communication", "DistributedLloyd", "FederatedClusteringMixin", "KFed", "LocalKMeans"]

"""Federated and distributed k-means estimators, one module per algorithm."""

from ._base import Communication
from .kfed import KFed

__all__ = ["Communication", "KFed"]

"""fedclust: federated and distributed k-means, reproducibly.

Every algorithm is a scikit-learn-style estimator fitted with ``fit(X, devices)``.
"""

from .algorithms import Communication, DistributedLloyd, KFed, LocalKMeans
from .federation import Federation, iid_partition, structured_partition

__all__ = [
    "Communication",
    "DistributedLloyd",
    "Federation",
    "KFed",
    "LocalKMeans",
    "iid_partition",
    "structured_partition",
]
__version__ = "0.1.0"

"""What every federated clustering estimator shares.

Every estimator follows the scikit-learn conventions (``get_params``/``set_params`` through
:class:`sklearn.base.BaseEstimator`, fitted attributes ending in ``_``) and the project's
federated convention ``fit(X, devices)``. After ``fit`` it exposes

* ``cluster_centers_`` -- ndarray of shape (n_clusters, n_features)
* ``labels_`` -- the cluster of every training row, in the input order
* ``communication_`` -- a :class:`Communication` dict with at least ``rounds``, ``floats_up`` and
  ``floats_down``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._validation import check_data
from ..lloyd import assign
from ..metrics import kmeans_cost

__all__ = ["FederatedClusteringMixin", "Communication", "seed_for"]


class Communication(dict):
    """Communication counters of one fit.

    Keys
    ----
    rounds : int
        Synchronous server <-> device round trips.
    floats_up, floats_down : int
        Scalars sent from devices to the server, and from the server to devices, summed over
        every device and round.
    messages_up, messages_down : int
        Device-to-server and server-to-device messages.
    """

    def __init__(self, rounds=0, floats_up=0, floats_down=0, messages_up=0, messages_down=0,
                 **extra):
        super().__init__(rounds=int(rounds), floats_up=int(floats_up),
                         floats_down=int(floats_down), messages_up=int(messages_up),
                         messages_down=int(messages_down), **extra)

    def add_round(self, *, up_floats: int, down_floats: int, up_messages: int,
                  down_messages: int) -> None:
        """Record one synchronous round."""
        self["rounds"] += 1
        self["floats_up"] += int(up_floats)
        self["floats_down"] += int(down_floats)
        self["messages_up"] += int(up_messages)
        self["messages_down"] += int(down_messages)


def seed_for(rng: np.random.Generator) -> int:
    """A 31-bit integer seed drawn from ``rng``, for library calls that take an int."""
    return int(rng.integers(0, 2**31 - 1))


class FederatedClusteringMixin(BaseEstimator):
    """``predict``, ``fit_predict`` and ``score`` for an estimator with ``cluster_centers_``."""

    def fit(self, X, devices):  # pragma: no cover - every estimator overrides it
        raise NotImplementedError

    def fit_predict(self, X, devices):
        """Fit on the federation and return the cluster of every row (``labels_``)."""
        return self.fit(X, devices).labels_

    def predict(self, X):
        """Index of the nearest center in ``cluster_centers_`` for every row of ``X``."""
        check_is_fitted(self, "cluster_centers_")
        X = self._check_test_data(X)
        return assign(X, self.cluster_centers_)[0]

    def score(self, X):
        """Opposite of the k-means cost of ``X`` under the fitted centers (higher is better)."""
        check_is_fitted(self, "cluster_centers_")
        return -kmeans_cost(self._check_test_data(X), self.cluster_centers_)

    def _check_test_data(self, X):
        X = check_data(X)
        if X.shape[1] != self.cluster_centers_.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} was fitted on "
                f"{self.cluster_centers_.shape[1]}"
            )
        return X

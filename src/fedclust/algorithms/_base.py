"""The contract every federated clustering estimator follows: :class:`FederatedClusteringMixin`,
scikit-learn's conventions plus ``fit(X, y=None, *, devices=None, sample_weight=None)``, which
``tests/test_common.py`` checks for every estimator; and the pieces several estimators share,
:func:`lloyd_rounds`, :func:`data_tolerance` and :func:`warn_not_converged`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._validation import check_distinct_points, check_n_clusters, fit_rng
from ..communication import SERVER, Communication
from ..exceptions import DevicesWarning
from ..federation import Federation
from ..lloyd import LloydResult, assign, lloyd, tolerance
from ..metrics import kmeans_cost, labelled_cost

__all__ = ["FederatedClusteringMixin", "POSITIVE_INT", "TOL"]


#: A parameter that counts something (clusters, iterations, rounds): an int >= 1.
POSITIVE_INT = Interval(Integral, 1, None, closed="left")
#: A relative convergence tolerance (``tol``), as scikit-learn's ``KMeans``: a float >= 0.
TOL = Interval(Real, 0, None, closed="left")


#: How ``fit`` and ``predict`` validate ``X`` (scikit-learn's ``validate_data``): float32 stays
#: float32, every other numeric type becomes float64, C order (the kernel reads rows).
_X_CHECKS = {"accept_sparse": False, "dtype": [np.float64, np.float32], "order": "C"}


class FederatedClusteringMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin,
                               BaseEstimator):
    """Shared ``fit``, ``predict``, ``fit_predict``, ``transform``, ``fit_transform`` and
    ``score``; ``get_feature_names_out`` and ``set_output`` as scikit-learn's ``KMeans`` has
    them (one output feature per cluster, the distance to its center).

    The contract: scikit-learn's conventions (parameters validated in ``fit``, nothing
    computed in ``__init__``, fitted attributes ending in ``_``) plus ``fit(X, y=None, *,
    devices=None, sample_weight=None)``, ``devices`` a keyword routed as metadata. ``fit``
    validates the input, builds the :class:`~fedclust.federation.Federation` and the
    :class:`~fedclust.communication.Communication` ledger, draws from a generator that never
    consumes the caller's, calls the estimator's ``_fit`` and sets what every estimator
    exposes (``cluster_centers_``, ``labels_``, equal to ``predict(X)`` unless
    ``_labels_are_nearest_center`` says otherwise, ``inertia_``, ``n_iter_``, ``converged_``,
    ``n_features_in_``, ``communication_``, and ``history_`` on estimators that run rounds);
    ``tests/test_common.py`` checks all of it for every estimator.

    Subclasses declare ``_parameter_constraints`` (scikit-learn's declarative validation,
    checked by ``fit`` before anything else, in scikit-learn's words), extending this class's,
    and implement ``_fit(federation, rng, comm, callback)``, which sets ``cluster_centers_``,
    ``labels_`` (input order) and ``n_iter_``; ``_check_params`` checks what one parameter's
    constraint cannot say (a relation between two of them). One of another objective than
    k-means overrides ``_cost``, which ``inertia_`` and ``score`` share.
    """

    #: The parameters every estimator has; a subclass adds its own (scikit-learn's
    #: ``_parameter_constraints``: ``fit`` refuses any other value, naming the parameter).
    #: ``random_state``: an int >= 0, None, a ``SeedSequence``, a ``Generator`` or a legacy
    #: ``RandomState`` (neither consumed: :func:`fedclust._validation.fit_rng`).
    _parameter_constraints: dict = {
        "n_clusters": [POSITIVE_INT],
        "random_state": [None, Interval(Integral, 0, None, closed="left"),
                         np.random.SeedSequence, np.random.Generator, np.random.RandomState],
    }

    #: Whether ``labels_ == predict(X)`` on the training rows (else documented).
    _labels_are_nearest_center = True
    #: Whether negative sample weights are accepted.
    _allows_negative_weights = False
    #: Whether ``fit`` reports rounds to a ``callback``.
    _reports_rounds = False

    def check_params(self) -> None:
        """Check every parameter as :meth:`fit` does before it touches data, raising the
        error ``fit`` would: each against its constraint, then the relations between them.

        For the step API (a server that runs the estimator's steps without ``fit``: the
        Flower apps) to refuse a bad setting before the first round.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            A parameter outside its constraint (a ``ValueError`` and ``TypeError``).
        ValueError
            Parameters that contradict each other (e.g. k-FED's ``device_clusters`` above
            ``n_clusters``).
        """
        self._validate_params()
        self._check_params()

    def _check_params(self) -> None:
        """Relations between parameters that their constraints cannot state (none here)."""

    def _fit(self, federation: Federation, rng: np.random.Generator, comm: Communication,
             callback) -> None:  # pragma: no cover - every estimator overrides it
        raise NotImplementedError

    def _refine_by_lloyd(self, federation: Federation, comm: Communication,
                         max_iter: int) -> bool:
        """Lloyd rounds over the federation from ``cluster_centers_`` (a one-shot
        estimator's refinement, at most ``max_iter``, stopped by the estimator's ``tol``): the
        centers and labels become Lloyd's, ``n_iter_refine_`` its updates and the ledger notes
        ``refine_rounds``. ``max_iter=0``: nothing. Returns whether ``tol`` held."""
        self.n_iter_refine_ = 0
        if not max_iter:
            return True
        tol = data_tolerance(federation, self.tol, comm)
        result, rounds = lloyd_rounds(federation, self.cluster_centers_, max_iter=max_iter,
                                      tol=tol, comm=comm)
        comm.note("refine_rounds", rounds)
        self.cluster_centers_ = result.centers
        self.labels_ = federation.to_original_order(result.labels)
        self.n_iter_refine_ = result.n_iter
        return bool(result.converged)

    def _cost(self, X, centers, labels=None, sample_weight=None) -> float:
        """The (weighted) cost of the rows ``X`` under ``centers``, each row at its center in
        ``labels`` (None: its nearest center): ``inertia_`` on the training rows (already
        validated), the negative of :meth:`score` on others. The k-means cost; an estimator
        that minimizes another objective overrides it."""
        if labels is None:
            return kmeans_cost(X, centers, sample_weight=sample_weight)
        return labelled_cost(X, centers, labels, sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, devices=None, sample_weight=None, callback=None):
        """Fit on the federation given by ``X`` and the device of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
            Not used, present for API consistency (as scikit-learn's ``KMeans``): class labels
            that a ``Pipeline`` passes are never read as devices.
        devices : array-like of shape (n_samples,), default=None
            The device (machine, client, site) holding each row, by id: integers (of any
            sign) or strings; None: one device holds every row. The communication ledger
            names a device by its position in the sorted ids (the server is -1); a
            ``topology`` (DistributedCoreset) by its id, a non-negative integer. Keyword
            only; a metadata that ``Pipeline``, ``GridSearchCV`` and ``cross_validate`` pass
            to ``fit`` when metadata routing is on and the estimator requests it
            (``set_fit_request(devices=True)``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of every row; ``w`` repeated rows and weight ``w`` fit the same model.
        callback : callable(RoundState), optional
            Called after every round by estimators that run rounds (e.g.
            :class:`fedclust.rounds.History`); refused by one-shot estimators.

        Returns
        -------
        self
        """
        self._check_params()
        if callback is not None and not self._reports_rounds:
            raise TypeError(f"{type(self).__name__} runs no rounds to report: callback must "
                            f"be None")
        # scikit-learn's validation and wording: 2-D, numeric (object arrays of numbers
        # converted), not complex, dense (sparse refused, saying so), finite, non-empty
        X = validate_data(self, X, **_X_CHECKS)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=np.float64,
                ensure_non_negative=not self._allows_negative_weights)
        if devices is None:
            _warn_centralized(type(self).__name__, y is not None)
            devices = np.zeros(X.shape[0], dtype=np.int64)
        federation = Federation.from_devices(
            X, devices, sample_weight=sample_weight, topology=getattr(self, "topology", None),
            allow_negative_weights=self._allows_negative_weights)
        check_n_clusters(self.n_clusters, federation.n_samples)
        # fewer distinct points than clusters: warned, and duplicate centres allowed
        self._few_distinct_points = check_distinct_points(federation.X, self.n_clusters,
                                                          federation.weights)
        comm = Communication(float_bytes=federation.X.itemsize)
        self._fit(federation, fit_rng(self.random_state), comm, callback)
        self.n_features_in_ = federation.n_features
        self.communication_ = comm
        self.inertia_ = self._cost(federation.X, self.cluster_centers_,
                                   self.labels_[federation.order], federation.weights)
        return self

    def fit_predict(self, X, y=None, *, devices=None, sample_weight=None, **kwargs):
        """Fit on the federation and return the cluster of every row (``labels_``); the
        parameters are :meth:`fit`'s."""
        return self.fit(X, y, devices=devices, sample_weight=sample_weight,
                        **kwargs).labels_

    def transform(self, X):
        """Distance of every row of ``X`` to every center of ``cluster_centers_`` (the
        cluster-distance space, as scikit-learn's ``KMeans.transform``).

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
        """
        check_is_fitted(self, "cluster_centers_")
        return euclidean_distances(self._check_test_data(X), self.cluster_centers_)

    def fit_transform(self, X, y=None, *, devices=None, sample_weight=None, **kwargs):
        """Fit on the federation and return the distance of every row to every center; the
        parameters are :meth:`fit`'s."""
        return self.fit(X, y, devices=devices, sample_weight=sample_weight,
                        **kwargs).transform(X)

    @property
    def _n_features_out(self):
        """One output feature per cluster (``get_feature_names_out``)."""
        return self.cluster_centers_.shape[0]

    def predict(self, X):
        """Index of the nearest center in ``cluster_centers_`` for every row of ``X``."""
        check_is_fitted(self, "cluster_centers_")
        X = self._check_test_data(X)
        return assign(X, self.cluster_centers_)[0]

    def score(self, X, y=None, sample_weight=None):
        """Opposite of the (weighted) cost of ``X`` under the fitted centers, every row at its
        nearest center: the k-means cost, or the cost of the estimator's objective (the same
        as ``inertia_``'s).

        On the training rows ``score(X) == -inertia_`` where ``labels_`` are the nearest
        centers; where an estimator documents other labels (k-FED's ``labels_`` are the
        induced clustering, Definition 3.3: each row takes the global cluster of its device's
        local center), ``inertia_`` is the cost of those labels and ``-score(X)`` is at most
        it."""
        check_is_fitted(self, "cluster_centers_")
        return -self._cost(self._check_test_data(X), self.cluster_centers_,
                           sample_weight=sample_weight)

    def _check_test_data(self, X):
        return validate_data(self, X, reset=False, **_X_CHECKS)


def data_tolerance(federation: Federation, tol, comm: Communication) -> float:
    """The absolute tolerance of a relative ``tol`` on the federation's rows
    (:func:`fedclust.lloyd.tolerance`: ``tol`` times the mean feature variance), and its cost
    in the ledger: the server needs every device's row weight, feature sums and sum of
    squared norms, ``d + 2`` floats up from each (kind ``data_moments``), sent once with its
    first message. ``tol`` None or 0: no tolerance, nothing sent.

    Returns
    -------
    float
    """
    if not tol:
        return 0.0
    comm.send("data_moments", np.arange(federation.n_devices), SERVER,
              floats=federation.n_features + 2)
    return tolerance(federation.X, tol, federation.weights)


def lloyd_rounds(federation: Federation, init, *, max_iter: int, tol: float,
                 comm: Communication, on_iteration=None) -> tuple[LloydResult, int]:
    """Lloyd's algorithm over the federation, one round per iteration, and its ledger.

    Every round the server broadcasts the ``k`` centers (``k d`` floats, kind ``centers``)
    and every device returns its per-cluster sums and counts (``cluster_sums``,
    ``cluster_counts``; weight totals, floats, with sample weights); the pooled update is
    centralized Lloyd's, computed once by :func:`fedclust.lloyd.lloyd`. Convergence by
    unchanged labels shows in the round after the update (``n_iter + 1`` rounds); by a small
    shift, or at ``max_iter``, in the update's round, after which the final centers are
    broadcast once more so that the devices can label their rows.

    Parameters
    ----------
    federation : Federation
    init : ndarray of shape (n_clusters, n_features)
    max_iter : int
    tol : float
        Absolute tolerance on the sum of squared center shifts (:func:`data_tolerance`).
    comm : Communication
        The fit's ledger; the rounds are added to it.
    on_iteration : callable or None
        Passed to :func:`fedclust.lloyd.lloyd`.

    Returns
    -------
    result : LloydResult
    rounds : int
        Communication rounds used.
    """
    result = lloyd(federation.X, init, weights=federation.weights, max_iter=max_iter,
                   on_iteration=on_iteration, tol=tol)
    Z, (k, d) = federation.n_devices, result.centers.shape
    devices = np.arange(Z)
    by_labels = result.converged and not result.by_shift
    rounds = result.n_iter + 1 if by_labels else result.n_iter
    counts = {"ints": k} if federation.weights is None else {"floats": k}
    comm.send("centers", SERVER, devices, floats=k * d, times=rounds)
    comm.send("cluster_sums", devices, SERVER, floats=k * d, times=rounds)
    comm.send("cluster_counts", devices, SERVER, times=rounds, **counts)
    comm.add_rounds(rounds)
    if not by_labels:  # the devices' labels need the final centers
        comm.send("centers", SERVER, devices, floats=k * d)
    return result, rounds


def warn_not_converged(estimator, cap: str, value: int, who: str | None = None) -> None:
    """Warn (scikit-learn's ``ConvergenceWarning``) that ``estimator``'s fit (or its part
    ``who``) stopped at its iteration cap before the convergence test held; not when ``fit``
    has warned that the data hold fewer distinct points than clusters (a cluster then never
    settles, and that warning says why)."""
    from sklearn.exceptions import ConvergenceWarning

    if getattr(estimator, "_few_distinct_points", False):
        return
    warnings.warn(f"{who or type(estimator).__name__} stopped at {cap}={value} before "
                  f"converging; raise {cap}, or tol to stop earlier", ConvergenceWarning,
                  stacklevel=4)


def _warn_centralized(name: str, y_given: bool) -> None:
    """Say that a fit without ``devices`` is centralized, naming ``devices=`` when ``y`` was
    given (the devices may have been passed as ``y``); the warnings module shows each once per
    call site by default."""
    if y_given:
        message = (f"{name}.fit: y is ignored and devices= was not given, so every row is "
                   f"one device (a centralized fit); pass the device of each row as "
                   f"fit(X, devices=...)")
    else:
        message = (f"{name}.fit: devices= not given, so every row is one device (a "
                   f"centralized fit)")
    warnings.warn(message, DevicesWarning, stacklevel=3)

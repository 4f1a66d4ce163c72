"""Property tests: every estimator of the shared contract on federations hypothesis draws.

The federations are the awkward ones a real split produces: devices with fewer points than
k' (or than k), a single device, one point per device, repeated points, fewer features than
k', rows of zero weight. On any such input an estimator either fits -- centres finite, every
row labelled, ``inertia_`` the cost of its labels computed here independently -- or raises
the one specific error of an impossible setting (``InfeasibleSettingError``), never a NaN,
an ``IndexError`` or a numpy warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from fedclust.exceptions import InfeasibleSettingError

from .test_common import ALL, independent_cost, make

K = 3  # the n_clusters of test_common.make
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.too_slow])


@st.composite
def federations(draw, *, min_samples=K):
    """(X, devices, sample_weight): 1-6 devices of 1-8 rows each, 1-4 features, entries on a
    coarse grid (so repeated points are common), weights None or with zeros."""
    n_devices = draw(st.integers(1, 6))
    sizes = draw(st.lists(st.integers(1, 8), min_size=n_devices, max_size=n_devices))
    n = sum(sizes)
    if n < min_samples:
        sizes[0] += min_samples - n
        n = min_samples
    d = draw(st.integers(1, 4))
    grid = draw(st.sampled_from([1.0, 0.5, 10.0]))
    X = np.array(draw(st.lists(st.integers(-3, 3), min_size=n * d, max_size=n * d)),
                 dtype=float).reshape(n, d) * grid
    ids = draw(st.permutations(range(100, 100 + n_devices)))  # ids need not be contiguous
    devices = np.repeat(np.array(ids), sizes)
    order = draw(st.permutations(range(n)))
    weights = None
    if draw(st.booleans()):
        weights = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n,
                                         max_size=n)))
        weights[draw(st.integers(0, n - 1))] = 1.0  # at least one positive weight
        weights = weights[list(order)]
    return X[list(order)], devices[list(order)], weights


def _distinct_positive_rows(X, weights):
    rows = X if weights is None else X[weights > 0]
    return len(np.unique(rows, axis=0))


@pytest.mark.parametrize("estimator_class", ALL, ids=lambda cls: cls.__name__)
@PROPERTY_SETTINGS
@given(data=federations())
def test_fits_or_refuses_the_setting_by_name(estimator_class, data):
    X, devices, weights = data
    est = make(estimator_class)
    few = _distinct_positive_rows(X, weights) < K
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, devices=devices, sample_weight=weights)
        except InfeasibleSettingError as error:
            assert str(error)  # says why
            return
    # a numpy overflow or empty-mean warning fails; fewer distinct points than clusters is
    # scikit-learn's ConvergenceWarning, and a model
    assert [type(w.message) for w in caught] == ([ConvergenceWarning] if few else [])
    centers, labels = est.cluster_centers_, est.labels_
    assert centers.shape == (K, X.shape[1]) and np.isfinite(centers).all()
    assert labels.shape == (len(X),) and labels.min() >= 0 and labels.max() < K
    assert est.inertia_ == pytest.approx(independent_cost(X, centers, labels, weights),
                                         rel=1e-9, abs=1e-9)
    assert np.array_equal(est.predict(X).shape, labels.shape)


@pytest.mark.parametrize("estimator_class", ALL, ids=lambda cls: cls.__name__)
@PROPERTY_SETTINGS
@given(data=federations(), where=st.integers(0, 10_000),
       bad=st.sampled_from([np.nan, np.inf, -np.inf]))
def test_a_nan_or_infinity_anywhere_is_named(estimator_class, data, where, bad):
    X, devices, weights = data
    X = X.copy()
    X.flat[where % X.size] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        make(estimator_class).fit(X, devices=devices, sample_weight=weights)


@pytest.mark.parametrize("estimator_class", ALL, ids=lambda cls: cls.__name__)
@PROPERTY_SETTINGS
@given(data=federations(), scale=st.sampled_from([1e155, 1e200, 1e300]))
def test_values_whose_squares_overflow_are_named(estimator_class, data, scale):
    X, devices, weights = data
    X = X.copy()
    X.flat[0] = scale
    with pytest.raises(ValueError, match=r"X holds values up to .* too large for k-means"):
        make(estimator_class).fit(X, devices=devices, sample_weight=weights)

import numpy as np
import pytest
from scipy.stats import chisquare

from fedclust import DistributedLloyd, Federation
from fedclust.algorithms._seeding import distributed_kmeans_plusplus, distributed_random_init
from fedclust.lloyd import lloyd
from fedclust.metrics import clustering_accuracy, kmeans_cost

from .conftest import make_blobs


def federated_blobs(rng, n_devices=5):
    X, labels, centers = make_blobs(rng, n_clusters=4, n_features=6, per_cluster=50)
    devices = rng.integers(0, n_devices, size=len(X))
    return X, labels, devices


def test_equals_centralized_lloyd_from_the_same_init(rng):
    X, labels, devices = federated_blobs(rng)
    init = X[[0, 60, 120, 180]]
    model = DistributedLloyd(4, init=init).fit(X, devices)
    ref = lloyd(X, init)
    np.testing.assert_allclose(model.cluster_centers_, ref.centers, atol=1e-10)
    assert clustering_accuracy(labels, model.labels_) == 1.0
    assert model.inertia_ == pytest.approx(kmeans_cost(X, model.cluster_centers_))


def test_communication_counts_are_exact(rng):
    X, _, devices = federated_blobs(rng)
    Z, k, d = len(np.unique(devices)), 4, X.shape[1]
    model = DistributedLloyd(k, init=X[[0, 60, 120, 180]]).fit(X, devices)
    assert model.converged_
    rounds = model.n_iter_ + 1
    assert model.communication_["rounds"] == rounds
    assert model.communication_["floats_down"] == rounds * Z * k * d
    assert model.communication_["floats_up"] == rounds * Z * (k * d + k)
    # all four seeds in one blob: one iteration cannot reach the fixed point
    stopped = DistributedLloyd(k, init=X[:4], max_iter=1).fit(X, devices)
    assert not stopped.converged_
    assert stopped.communication_["rounds"] == 1
    assert stopped.communication_["floats_down"] == 2 * Z * k * d
    assert stopped.communication_["floats_up"] == Z * (k * d + k)


def test_kmeans_plusplus_seeding_costs_two_rounds_per_center(rng):
    X, _, devices = federated_blobs(rng)
    fed = Federation.from_devices(X, devices)
    Z, d = fed.n_devices, fed.n_features
    centers, rows, comm = distributed_kmeans_plusplus(fed, 4, np.random.default_rng(0))
    assert comm["rounds"] == 8
    assert comm["floats_up"] == 4 * (Z + d)
    assert comm["floats_down"] == 3 * Z * d
    np.testing.assert_array_equal(centers, fed.X[rows])
    model = DistributedLloyd(4, random_state=0).fit(X, devices)
    assert model.communication_["seeding_rounds"] == 8
    assert model.communication_["rounds"] == 8 + model.n_iter_ + 1


def test_kmeans_plusplus_has_the_centralized_distribution():
    """Second center: P(x) must be D^2(x) / sum D^2 given the first (exact k-means++)."""
    X = np.array([[0.0], [1.0], [3.0], [10.0], [0.0], [2.0]])
    devices = np.array([0, 0, 1, 1, 2, 2])
    fed = Federation.from_devices(X, devices)
    rng = np.random.default_rng(1)
    draws = 12000
    second = {}
    for _ in range(draws):
        _, rows, _ = distributed_kmeans_plusplus(fed, 2, rng)
        if rows[0] == 0:                      # condition on the first center being x=0
            second[rows[1]] = second.get(rows[1], 0) + 1
    d2 = (fed.X[:, 0] - fed.X[0, 0]) ** 2
    expected = d2 / d2.sum() * sum(second.values())
    observed = np.array([second.get(i, 0) for i in range(len(X))])
    assert observed[d2 == 0].sum() == 0
    mask = d2 > 0
    assert chisquare(observed[mask], expected[mask]).pvalue > 1e-3


def test_random_init_picks_distinct_rows(rng):
    X, _, devices = federated_blobs(rng)
    fed = Federation.from_devices(X, devices)
    centers, rows, comm = distributed_random_init(fed, 7, np.random.default_rng(0))
    assert len(set(rows.tolist())) == 7 and comm["rounds"] == 2
    with pytest.raises(ValueError, match="exceeds the"):
        distributed_random_init(fed, len(X) + 1, np.random.default_rng(0))


def test_seeded_and_validated(rng):
    X, _, devices = federated_blobs(rng)
    a = DistributedLloyd(4, random_state=3).fit(X, devices)
    b = DistributedLloyd(4, random_state=3).fit(X, devices)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    with pytest.raises(ValueError, match="init must be one of"):
        DistributedLloyd(4, init="farthest").fit(X, devices)
    with pytest.raises(ValueError, match=r"init array must have shape \(4, 6\)"):
        DistributedLloyd(4, init=np.zeros((3, 6))).fit(X, devices)

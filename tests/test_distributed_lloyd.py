import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from fedclust import DistributedLloyd
from fedclust.lloyd import lloyd
from fedclust.metrics import clustering_accuracy, kmeans_cost
from fedclust.rounds import History

from .conftest import make_blobs


def federated_blobs(rng, n_devices=5):
    X, labels, centers = make_blobs(rng, n_clusters=4, n_features=6, per_cluster=50)
    devices = rng.integers(0, n_devices, size=len(X))
    return X, labels, devices


def test_equals_centralized_lloyd_from_the_same_init(rng):
    X, labels, devices = federated_blobs(rng)
    init = X[[0, 60, 120, 180]]
    model = DistributedLloyd(4, init=init).fit(X, devices=devices)
    ref = lloyd(X, init)
    np.testing.assert_allclose(model.cluster_centers_, ref.centers, atol=1e-10)
    assert clustering_accuracy(labels, model.labels_) == 1.0
    assert model.inertia_ == pytest.approx(kmeans_cost(X, model.cluster_centers_))


def test_communication_counts_are_exact(rng):
    X, _, devices = federated_blobs(rng)
    Z, k, d = len(np.unique(devices)), 4, X.shape[1]
    model = DistributedLloyd(k, init=X[[0, 60, 120, 180]], tol=0).fit(X, devices=devices)
    assert model.converged_
    rounds = model.n_iter_ + 1
    assert model.communication_["rounds"] == rounds
    assert model.communication_["floats_down"] == rounds * Z * k * d
    assert model.communication_["floats_up"] == rounds * Z * k * d
    assert model.communication_["ints_up"] == rounds * Z * k  # cluster counts
    assert model.communication_["lloyd_rounds"] == rounds
    # all four seeds in one blob: one iteration cannot reach the fixed point
    with pytest.warns(ConvergenceWarning, match="stopped at max_iter=1 before converging"):
        stopped = DistributedLloyd(k, init=X[:4], max_iter=1, tol=0).fit(X, devices=devices)
    assert not stopped.converged_
    assert stopped.communication_["rounds"] == 1
    assert stopped.communication_["floats_down"] == 2 * Z * k * d
    assert stopped.communication_["floats_up"] == Z * k * d


def test_seeding_rounds_come_first(rng):
    X, _, devices = federated_blobs(rng)
    exact = DistributedLloyd(4, init="k-means++", tol=0, random_state=0).fit(X, devices=devices)
    assert exact.communication_["seeding_rounds"] == 8  # two per center
    assert exact.communication_["rounds"] == 8 + exact.n_iter_ + 1
    greedy = DistributedLloyd(4, tol=0, random_state=0).fit(X, devices=devices)  # the default
    assert greedy.communication_["seeding_rounds"] == 9  # 2 k + 1
    assert greedy.communication_["rounds"] == 9 + greedy.n_iter_ + 1


def test_every_iteration_is_reported(rng):
    X, _, devices = federated_blobs(rng)
    history = History()
    model = DistributedLloyd(4, random_state=1).fit(X, devices=devices, callback=history)
    frame = history.to_frame()
    assert frame["round"].tolist() == list(range(model.n_iter_ + 1))
    assert frame["objective"].iloc[-1] == pytest.approx(model.inertia_)
    assert frame["objective"].is_monotonic_decreasing


def test_seeded_and_validated(rng):
    X, _, devices = federated_blobs(rng)
    a = DistributedLloyd(4, random_state=3).fit(X, devices=devices)
    b = DistributedLloyd(4, random_state=3).fit(X, devices=devices)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    with pytest.raises(ValueError, match="'init' parameter of DistributedLloyd must be a str "
                                         "among"):
        DistributedLloyd(4, init="farthest").fit(X, devices=devices)
    with pytest.raises(ValueError, match=r"init array must have shape \(4, 6\)"):
        DistributedLloyd(4, init=np.zeros((3, 6))).fit(X, devices=devices)

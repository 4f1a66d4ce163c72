"""Client selection (random by size, pow-d, k-FED + pow-d) and k-FED's groups for training."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

from fedclust.algorithms import KFed  # noqa: E402
from fedclust.fl.clusters import route_by_local_centers, segments_of  # noqa: E402
from fedclust.fl.selection import (  # noqa: E402
    KFedPowerOfChoice,
    PowerOfChoice,
    RandomBySize,
    device_cluster_of,
)


def test_random_by_size_draws_in_proportion_to_size():
    sizes = np.array([1, 1, 1, 7])
    rng = np.random.default_rng(0)
    hits = np.zeros(4)
    for _ in range(4000):
        hits[RandomBySize(1).select(rng, sizes, None).devices] += 1
    np.testing.assert_allclose(hits / 4000, sizes / 10, atol=0.03)
    with pytest.raises(ValueError, match="only 2 hold"):
        RandomBySize(3).select(rng, np.array([0, 4, 5, 0]), None)


def test_powd_keeps_the_largest_losses_of_its_candidates():
    loss = np.array([0.1, 5.0, 0.3, 4.0, 0.2, 3.0])
    asked = []

    def query(ids):
        asked.append(ids)
        return loss[ids]

    chosen = PowerOfChoice(2, 6).select(np.random.default_rng(0), np.ones(6), query)
    assert chosen.devices.tolist() == [1, 3]                   # d = K: the global top 2
    assert sorted(chosen.queried.tolist()) == list(range(6)) and len(asked) == 1
    part = PowerOfChoice(2, 4).select(np.random.default_rng(1), np.ones(6), query)
    top = part.queried[np.argsort(-loss[part.queried])[:2]]
    assert part.devices.tolist() == sorted(top.tolist())
    with pytest.raises(ValueError, match="candidates"):
        PowerOfChoice(3, 2)


def test_kfed_powd_takes_one_device_per_cluster_then_fills():
    loss = np.array([9.0, 8.0, 7.0, 6.0, 5.0, 4.0])
    clusters = np.array([0, 0, 1, 1, 2, 2])
    query = lambda ids: loss[ids]                               # noqa: E731
    sel = KFedPowerOfChoice(3, 6, clusters).select(np.random.default_rng(0), np.ones(6), query)
    assert sel.devices.tolist() == [0, 2, 4] and sel.n_filled == 0
    two = KFedPowerOfChoice(3, 6, np.array([0, 0, 0, 1, 1, 1])).select(
        np.random.default_rng(0), np.ones(6), query)
    assert two.devices.tolist() == [0, 1, 3] and two.n_filled == 1   # filled by loss 8


def test_device_cluster_is_the_cluster_holding_most_of_its_rows():
    km = SimpleNamespace(device_ids_=np.array([3, 5, 9]), n_clusters=3,
                         local_center_devices_=np.array([3, 3, 5, 9, 9]),
                         local_center_sizes_=np.array([4, 6, 2, 5, 5]),
                         local_center_labels_=np.array([2, 0, 1, 2, 1]))
    assert device_cluster_of(km).tolist() == [0, 1, 1]          # device 9: a tie -> 1
    with pytest.raises(ValueError, match="majority"):
        device_cluster_of(km, "set")


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    means = np.array([[0, 0], [10, 0], [0, 10], [10, 10]], dtype=float)
    labels = np.repeat(np.arange(4), 60)
    X = means[labels] + rng.normal(scale=0.5, size=(240, 2))
    devices = np.concatenate([np.repeat(np.arange(6), 20), np.repeat(np.arange(6, 12), 20)])
    return X, labels, devices


def test_routing_by_local_centres_reproduces_the_induced_clustering():
    X, labels, devices = _blobs()
    km = KFed(n_clusters=4, device_clusters=2, random_state=0).fit(X, devices=devices)
    routed = route_by_local_centers(km, X, devices)
    np.testing.assert_array_equal(routed, km.labels_)
    with pytest.raises(ValueError, match="not in the k-FED fit"):
        route_by_local_centers(km, X[:2], np.array([99, 99]))


def test_segments_are_device_cluster_pairs():
    segment, device, cluster = segments_of(np.array([0, 0, 1, 1, 1]), np.array([2, 0, 2, 2, 1]))
    assert len(set(segment)) == 4
    assert list(zip(device, cluster, strict=True)) == [(0, 0), (0, 2), (1, 1), (1, 2)]

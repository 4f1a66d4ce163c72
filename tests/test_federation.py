import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedclust.federation import Federation
from fedclust.partitions import iid_partition, structured_partition
from fedclust.topology import Topology


def test_from_devices_sorts_rows_and_builds_offsets(rng):
    X = rng.standard_normal((10, 3))
    devices = np.array([7, 2, 7, 2, 9, 9, 9, 2, 7, 2])
    fed = Federation.from_devices(X, devices)
    assert fed.device_ids.tolist() == [2, 7, 9]
    assert fed.offsets.tolist() == [0, 4, 7, 10]
    assert np.array_equal(fed.X, X[fed.order])
    # stable: each device keeps its rows in input order
    assert fed.order[:4].tolist() == [1, 3, 7, 9]
    for z, dev in enumerate(fed.device_ids):
        assert np.array_equal(fed.device_data(z), X[devices == dev])
    assert np.array_equal(fed.device_of_row, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2])


def test_to_original_order_inverts_the_sort(rng):
    X = rng.standard_normal((50, 2))
    devices = rng.integers(0, 6, size=50)
    fed = Federation.from_devices(X, devices)
    assert np.array_equal(fed.to_original_order(fed.X[:, 0]), X[:, 0])
    assert np.array_equal(fed.to_original_order(fed.device_ids[fed.device_of_row]), devices)


def test_subset_keeps_chosen_devices(rng):
    X = rng.standard_normal((30, 2))
    devices = np.repeat([0, 1, 2], 10)
    fed = Federation.from_devices(X, devices)
    sub = fed.subset([2, 0])
    assert sub.device_ids.tolist() == [0, 2]
    assert np.array_equal(sub.X, np.vstack([X[:10], X[20:]]))
    assert np.array_equal(X[sub.order], sub.X)


def test_bad_devices_are_named():
    with pytest.raises(ValueError, match="devices must be a 1-D array"):
        Federation.from_devices(np.zeros((4, 2)), [0, 1, 2])
    with pytest.raises(ValueError, match="integer or string device ids"):
        Federation.from_devices(np.zeros((2, 2)), [0.5, 1.0])
    with pytest.raises(ValueError, match="ids of one sortable type"):
        Federation.from_devices(np.zeros((2, 2)), np.array(["a", 1], dtype=object))


def test_string_ids_are_devices_and_a_topology_needs_integer_ones():
    """Clients named by strings sort as their names; their nodes (the star's, the ledger's)
    are their positions. A topology's nodes are the devices' ids: only non-negative
    integers can be them."""
    X = np.arange(10.0).reshape(5, 2)
    fed = Federation.from_devices(X, ["b", "a", "b", "c", "a"])
    assert fed.device_ids.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(fed.device_sizes, [2, 2, 1])
    np.testing.assert_array_equal(fed.node_ids, [0, 1, 2])
    assert sorted(fed.network.devices.tolist()) == [0, 1, 2]
    np.testing.assert_array_equal(Federation.from_devices(X, [7, 3, 7, 9, 3]).node_ids,
                                  [3, 7, 9])
    np.testing.assert_array_equal(Federation.from_devices(X, [-1, 0, 0, 1, 1]).node_ids,
                                  [0, 1, 2])
    for ids in (["b", "a", "b", "c", "a"], [-1, 0, 0, 1, 1]):
        with pytest.raises(ValueError, match="a topology's nodes are non-negative integers"):
            Federation.from_devices(X, ids, topology=Topology.grid(2))
    with pytest.raises(ValueError, match="X contains NaN"):
        Federation.from_devices(np.array([[np.nan, 1.0]]), [0])


def test_iid_partition_is_balanced_and_seeded():
    a = iid_partition(103, 10, random_state=3)
    b = iid_partition(103, 10, random_state=3)
    assert np.array_equal(a, b)
    counts = np.bincount(a)
    assert len(counts) == 10 and counts.max() - counts.min() <= 1
    assert not np.array_equal(a, iid_partition(103, 10, random_state=4))
    with pytest.raises(ValueError, match="n_devices must be <= 5"):
        iid_partition(5, 6)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 12), k_prime=st.integers(1, 5), m0=st.integers(1, 4),
       per_cluster=st.integers(4, 20), seed=st.integers(0, 10**6))
def test_structured_partition_properties(k, k_prime, m0, per_cluster, seed):
    labels = np.repeat(np.arange(k), per_cluster)
    devices = structured_partition(labels, k_prime, m0, random_state=seed)
    n_groups = -(-k // k_prime)
    assert len(np.unique(devices)) == n_groups * m0
    for dev in np.unique(devices):
        # every device holds data of at most k' clusters
        assert len(np.unique(labels[devices == dev])) <= k_prime
    for c in range(k):
        # every cluster lives on exactly m0 devices, split evenly
        counts = np.bincount(devices[labels == c])
        counts = counts[counts > 0]
        assert len(counts) == m0
        assert counts.max() - counts.min() <= 1
    # devices of one group share the same clusters
    groups = devices // m0
    for g in np.unique(groups):
        sets = {tuple(np.unique(labels[devices == d])) for d in np.unique(devices[groups == g])}
        assert len(sets) == 1


def test_structured_partition_rejects_empty_devices():
    with pytest.raises(ValueError, match="devices_per_group=5 exceeds the size of a group"):
        structured_partition(np.array([0, 0, 1, 1]), 1, 5)


def test_weights_and_topology_travel_with_the_rows(rng):
    from fedclust.topology import Topology
    X = rng.standard_normal((6, 2))
    devices = np.array([1, 0, 1, 0, 2, 2])
    w = np.arange(1.0, 7.0)
    fed = Federation.from_devices(X, devices, sample_weight=w)
    np.testing.assert_array_equal(fed.weights, w[fed.order])
    np.testing.assert_array_equal(fed.device_weights, [2 + 4, 1 + 3, 5 + 6])
    assert fed.is_star and fed.network.server is not None
    assert sorted(fed.network.devices.tolist()) == [0, 1, 2]
    sub = fed.subset([0, 2])
    np.testing.assert_array_equal(sub.weights, w[sub.order])
    grid = Topology.grid(2)
    on_grid = Federation.from_devices(X, devices, topology=grid)
    assert on_grid.network is grid and not on_grid.is_star
    with pytest.raises(ValueError, match=r"devices \[2\] are not nodes of the topology"):
        Federation.from_devices(X, devices, topology=Topology.grid(1, 2))
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        Federation.from_devices(X, devices, sample_weight=-w)
    negative = Federation.from_devices(X, devices, sample_weight=-w + 3,
                                       allow_negative_weights=True)
    assert (negative.weights < 0).any()


def test_rows_already_sorted_by_device_are_not_copied(rng):
    X = rng.standard_normal((50, 3))
    sorted_fed = Federation.from_devices(X, np.repeat([2, 5, 9], [10, 25, 15]))
    assert sorted_fed.X is X and (sorted_fed.order == np.arange(50)).all()
    devices = rng.integers(0, 4, size=50)
    shuffled = Federation.from_devices(X, devices)
    np.testing.assert_array_equal(shuffled.X, X[np.argsort(devices, kind="stable")])


def test_huge_finite_values_are_not_mistaken_for_infinite():
    from fedclust._validation import check_data
    X = np.full((4, 2), 1e308)  # the sum overflows; every entry is finite
    with pytest.raises(ValueError, match="X holds values up to 1e\\+308, too large"):
        check_data(X)  # named as too large, not as infinite
    X = np.full((4, 2), 1e100)
    assert check_data(X) is X
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        check_data(X)


@pytest.mark.parametrize("ids", [[3, 0, 3, 7, 0, 3], [-5, 10**12, -5, 4, 10**12, -5]])
def test_rows_sorted_stably_by_device_for_any_ids(ids):
    # small non-negative ids take the counting sort, others the comparison sort: same result
    X = np.arange(12.0).reshape(6, 2)
    fed = Federation.from_devices(X, ids)
    expected = np.argsort(ids, kind="stable")
    assert fed.order.tolist() == expected.tolist()
    np.testing.assert_array_equal(fed.X, X[expected])
    assert fed.device_ids.tolist() == sorted(set(ids))
    assert fed.device_sizes.tolist() == [ids.count(i) for i in sorted(set(ids))]
    assert fed.device_of_row.tolist() == np.searchsorted(sorted(set(ids)), np.sort(ids)).tolist()
    assert not fed.device_of_row.flags.writeable


@pytest.mark.parametrize("devices", [[0, 0, 1, 1], [1, 0, 1, 0], [7, -3, 7, -3]])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_refused_whether_or_not_rows_are_copied(devices, bad):
    # sorted rows are checked in place, unsorted ones by the sum the sorting copy takes
    X = np.ones((4, 3))
    X[2, 1] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinite values"):
        Federation.from_devices(X, devices)
    large = np.full((4, 3), 1e100)  # large, and squared distances still fit: accepted
    assert np.isfinite(Federation.from_devices(large, devices).X).all()
    huge = np.full((4, 3), 1e308)  # the sum overflows, the entries are finite: named so
    with pytest.raises(ValueError, match="X holds values up to 1e\\+308, too large"):
        Federation.from_devices(huge, devices)


def test_site_weight_partitions_follow_the_site_weights():
    from fedclust.partitions import site_weight_partition
    from fedclust.topology import Topology

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40_000, 3))
    pa = Topology.preferential_attachment(30, 2, random_state=0)
    degree = site_weight_partition(X, pa, "degree", random_state=0)
    share = np.bincount(degree, minlength=30) / len(X)
    expected = pa.degrees(pa.devices) / pa.degrees(pa.devices).sum()
    np.testing.assert_allclose(share, expected, atol=0.01)
    uniform = np.bincount(site_weight_partition(X, pa, "uniform", random_state=0)) / len(X)
    np.testing.assert_allclose(uniform, 1 / 30, atol=0.006)
    weighted = np.bincount(site_weight_partition(X, pa, "weighted", random_state=0),
                           minlength=30)
    assert weighted.max() > 3 * np.median(weighted)  # |N(0,1)| weights are uneven
    # similarity: rows of one blob favour the nodes anchored in it, so two blobs spread over
    # the nodes differently (total variation ~0.2; equal weights give the sampling noise)
    grid = Topology.grid(4)
    blobs = np.repeat(np.eye(3) * 20, 3000, axis=0) + rng.standard_normal((9000, 3))

    def spread_gap(devices):
        share = [np.bincount(part, minlength=16) / 3000 for part in devices.reshape(3, 3000)]
        return 0.5 * np.abs(share[0] - share[1]).sum()

    similar = site_weight_partition(blobs, grid, "similarity", random_state=1)
    assert spread_gap(similar) > 0.12
    assert spread_gap(site_weight_partition(blobs, grid, "uniform", random_state=1)) < 0.08
    assert np.array_equal(similar, site_weight_partition(blobs, grid, "similarity",
                                                         random_state=1))
    with pytest.raises(ValueError, match="scheme must be one of"):
        site_weight_partition(X, grid, "random")

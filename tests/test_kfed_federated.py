import numpy as np
import pandas as pd
import pytest

from fedclust.experiments.kfed_federated import (
    Oracle,
    clusters_per_device,
    heterogeneity_sweep,
    kfed_vs_distributed_lloyd,
    mix_partition,
    new_devices_vs_refit,
    participation_sweep,
    structured_vs_iid,
)
from fedclust.experiments.separation import oracle_kmeans

from .conftest import make_blobs


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    X, labels, _ = make_blobs(rng, n_clusters=4, n_features=8, per_cluster=60, spread=4.0)
    result = oracle_kmeans(X, 4, seed=0, n_init=3)
    return X, Oracle(result.labels, result.centers, result.inertia)


def values(table, metric, **where):
    sel = table[table.metric == metric]
    for key, value in where.items():
        sel = sel[sel[key] == value]
    return sel.value.to_numpy()


def test_structured_partitions_beat_iid_for_one_cluster_per_device(blobs):
    X, oracle = blobs
    table = structured_vs_iid(X, oracle, device_clusters_grid=[1, 2], devices_per_group=3,
                              runs=2, base_seed=0, progress=False)
    assert set(table.device_clusters) == {1, 2}
    assert values(table, "oracle_cost").tolist() == [oracle.cost] * 4
    # k' = 1: every device holds one oracle cluster, k-FED returns the oracle centers up to
    # the unweighted averaging of device means (device sizes differ by one)
    np.testing.assert_allclose(values(table, "structured_cost_over_oracle", device_clusters=1),
                               1.0, atol=1e-4)
    assert np.all(values(table, "cost_gap_ratio", device_clusters=1) < 0.01)
    assert set(table.n_devices) == {12, 6}  # ceil(4 / k') * m0, the same for the IID partition


def test_kfed_vs_distributed_lloyd_rows_and_communication(blobs):
    X, oracle = blobs
    table = kfed_vs_distributed_lloyd(X, oracle, device_clusters_grid=[2], devices_per_group=3,
                                      runs=2, base_seed=1, progress=False)
    assert set(table.algorithm) == {"k-FED", "distributed Lloyd"}
    assert np.all(values(table, "rounds", algorithm="k-FED") == 1)
    naive_rounds = values(table, "rounds", algorithm="distributed Lloyd")
    assert np.all(naive_rounds > 2 * 4)  # k-means++ seeding alone takes 2 rounds per center
    Z, d, k = 6, X.shape[1], 4
    assert np.all(values(table, "floats_down", algorithm="k-FED") == Z * k * d)
    np.testing.assert_allclose(values(table, "cost_over_oracle", algorithm="k-FED"), 1.0,
                               rtol=0.05)


def test_participation_sweep_counts_participating_devices(blobs):
    X, oracle = blobs
    table = participation_sweep(X, oracle, device_clusters=2, devices_per_group=5,
                                participations=[1.0, 0.5], runs=1, base_seed=2, progress=False)
    assert values(table, "devices_participating", participation=1.0).tolist() == [10]
    assert values(table, "devices_participating", participation=0.5).tolist() == [5]
    assert values(table, "floats_up", participation=0.5) < values(table, "floats_up",
                                                                    participation=1.0)


def test_participation_too_low_to_run_is_recorded_as_missing(blobs):
    X, oracle = blobs
    table = participation_sweep(X, oracle, device_clusters=1, devices_per_group=1,
                                participations=[0.25], runs=1, base_seed=2, progress=False)
    assert np.isnan(values(table, "accuracy")).all()


def test_new_devices_are_scored_on_their_own_points(blobs):
    X, oracle = blobs
    table = new_devices_vs_refit(X, oracle, device_clusters=2, devices_per_group=4,
                                 held_out_fractions=[0.25], runs=2, base_seed=3, progress=False)
    assert set(table.method) == {"predict (Theorem 3.2)", "refit with all devices"}
    assert np.all(values(table, "held_out_accuracy") > 0.95)
    # the oracle's centers are optimal for all points, not for a subset: ratios straddle 1
    assert np.all(np.abs(values(table, "held_out_cost_over_oracle") - 1.0) < 0.1)
    assert np.all(values(table, "held_out_cost") > 0)


def test_mix_partition_interpolates_to_iid():
    devices = np.repeat(np.arange(10), 100)
    rng = np.random.default_rng(0)
    assert np.array_equal(mix_partition(devices, 0.0, rng), devices)
    moved = mix_partition(devices, 0.5, rng)
    share_moved = np.mean(moved != devices)
    assert 0.4 < share_moved < 0.5  # half are redrawn, one in ten lands where it was
    assert set(np.unique(mix_partition(devices, 1.0, rng))) == set(range(10))


def test_clusters_per_device():
    devices = np.array([0, 0, 0, 1, 1, 1])
    labels = np.array([0, 0, 1, 2, 2, 2])
    assert clusters_per_device(devices, labels) == 1.5
    assert clusters_per_device(devices, labels, min_share=0.4) == 1.0


def test_heterogeneity_sweep_rises_toward_iid(blobs):
    X, oracle = blobs
    natural = oracle.labels.copy()  # one oracle cluster per device: maximal heterogeneity
    table = heterogeneity_sweep(X, natural, oracle, device_clusters=1, mix_fractions=[0.0, 1.0],
                                runs=1, base_seed=4, progress=False)
    assert values(table, "clusters_per_device", mix_fraction=0.0).tolist() == [1.0]
    assert values(table, "clusters_per_device", mix_fraction=1.0)[0] == 4.0
    np.testing.assert_allclose(values(table, "cost_over_oracle", mix_fraction=0.0), 1.0,
                               atol=1e-9)


def test_tables_are_reproducible(blobs):
    X, oracle = blobs
    kw = dict(device_clusters_grid=[2], devices_per_group=2, runs=1, base_seed=5,
              progress=False)
    pd.testing.assert_frame_equal(structured_vs_iid(X, oracle, **kw),
                                  structured_vs_iid(X, oracle, **kw))

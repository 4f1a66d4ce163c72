import numpy as np
import pandas as pd
import pytest

from fedclust.centralized import reference_kmeans
from fedclust.data.prepared import PreparedData
from fedclust.papers.kfed.federated import (
    Oracle,
    clusters_per_device,
    cost_gap_ratio,
    heterogeneity_sweep,
    kfed_vs_distributed_lloyd,
    new_devices_vs_refit,
    participation_sweep,
    run_experiment,
    structured_vs_iid,
)
from fedclust.partitions import mix_partition

from .conftest import assert_same_rows, make_blobs

QUIET = dict(show_progress=False, dataset="blobs")


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    X, labels, _ = make_blobs(rng, n_clusters=4, n_features=8, per_cluster=60, spread=4.0)
    result = reference_kmeans(X, 4, seed=0, n_init=3)
    return X, Oracle(result.labels, result.centers, result.inertia)


def values(table, metric, **where):
    sel = table[table.metric == metric]
    for key, value in where.items():
        sel = sel[sel[key] == value]
    return sel.value.to_numpy()


def test_structured_partitions_beat_iid_for_one_cluster_per_device(blobs):
    X, oracle = blobs
    table = structured_vs_iid(X, oracle, device_clusters_grid=[1, 2], n_devices=12,
                              runs=2, base_seed=0, **QUIET)
    assert set(table.device_clusters) == {1, 2} and set(table.n_devices) == {12}
    assert values(table, "oracle_cost").tolist() == [oracle.cost] * 4
    # k' = 1: every device holds one oracle cluster, so k-FED's induced clustering is the
    # oracle's and its Eq. 1 cost is phi* exactly
    np.testing.assert_allclose(values(table, "structured_cost_over_oracle", device_clusters=1),
                               1.0, rtol=1e-12)
    np.testing.assert_allclose(values(table, "structured_accuracy", device_clusters=1), 1.0)
    assert np.all(values(table, "cost_gap_ratio", device_clusters=1) < 0.01)
    # the structured partition: every device holds at most k' oracle clusters
    assert np.all(values(table, "iid_cost") > values(table, "structured_cost"))


def test_kfed_vs_distributed_lloyd_rows_and_communication(blobs):
    X, oracle = blobs
    table = kfed_vs_distributed_lloyd(X, oracle, device_clusters_grid=[2], n_devices=6,
                                      runs=2, base_seed=1, partition="structured",
                                      max_iter=300, **QUIET)
    assert set(table.algorithm) == {"k-FED", "k-FED (server to convergence)",
                                    "distributed Lloyd"}
    assert np.all(values(table, "rounds", algorithm="k-FED") == 1)
    naive = table[table.algorithm == "distributed Lloyd"]
    # k-means++ seeding takes 2 rounds per center; Lloyd rounds reported apart
    assert np.all(values(naive, "seeding_rounds") == 2 * 4)
    np.testing.assert_array_equal(values(naive, "rounds"),
                                  values(naive, "seeding_rounds") + values(naive, "lloyd_rounds"))
    Z, d = 6, X.shape[1]
    # k-FED sends each device's k^(z) <= 2 centers up and as many cluster ids (8-byte
    # integers) down
    ids_down = values(table, "bytes_down", algorithm="k-FED") / 8
    assert np.all(values(table, "floats_down", algorithm="k-FED") == 0)
    assert np.all(ids_down <= Z * 2)
    assert np.all(values(table, "floats_up", algorithm="k-FED") == ids_down * d)
    # the ledger's totals are up + down, in every row
    for unit in ("floats", "bytes"):
        np.testing.assert_array_equal(values(table, unit), values(table, f"{unit}_up")
                                      + values(table, f"{unit}_down"))
    np.testing.assert_allclose(values(table, "cost_over_oracle", algorithm="k-FED"), 1.0,
                               rtol=0.05)


def test_participation_sweep_counts_participating_devices(blobs):
    X, oracle = blobs
    table = participation_sweep(X, oracle, device_clusters=2, devices_per_group=5,
                                participations=[1.0, 0.5], runs=1, base_seed=2, **QUIET)
    assert values(table, "devices_participating", participation=1.0).tolist() == [10]
    assert values(table, "devices_participating", participation=0.5).tolist() == [5]
    # fewer devices upload in the round; the failed ones upload later (the ledger's totals)
    assert values(table, "floats_up_in_round", participation=0.5) < values(
        table, "floats_up_in_round", participation=1.0)
    assert values(table, "floats_up", participation=0.5) == values(table, "floats_up",
                                                                     participation=1.0)


def test_participation_too_low_to_run_is_written_as_skipped_with_its_reason(blobs, caplog):
    X, oracle = blobs
    table = participation_sweep(X, oracle, device_clusters=1, devices_per_group=1,
                                participations=[1.0, 0.25], runs=1, base_seed=2, **QUIET)
    skipped = table[table.metric == "skipped"]
    assert skipped.participation.tolist() == [0.25] and skipped.value.tolist() == [1.0]
    assert "only 1 of the 4 devices participate" in skipped.reason.iloc[0]
    assert "raise participation" in skipped.reason.iloc[0]
    assert "skipped participation" in caplog.text
    # the feasible level is complete, with no NaN anywhere
    assert len(values(table, "accuracy", participation=1.0)) == 1
    assert not table.value.isna().any()


def test_only_infeasible_settings_are_skipped(blobs):
    X, oracle = blobs
    # a configuration error (k' larger than k) is not a skipped setting: it stops the run
    with pytest.raises(ValueError, match="device_clusters must be <= n_clusters=4; got 5"):
        participation_sweep(X, oracle, device_clusters=5, devices_per_group=1,
                            participations=[1.0], runs=1, base_seed=2, **QUIET)


def test_new_devices_are_scored_on_their_own_points(blobs):
    X, oracle = blobs
    table = new_devices_vs_refit(X, oracle, device_clusters=2, devices_per_group=4,
                                 held_out_fractions=[0.25], runs=2, base_seed=3, **QUIET)
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
                                runs=1, base_seed=4, **QUIET)
    assert values(table, "clusters_per_device", mix_fraction=0.0).tolist() == [1.0]
    assert values(table, "clusters_per_device", mix_fraction=1.0)[0] == 4.0
    np.testing.assert_allclose(values(table, "cost_over_oracle", mix_fraction=0.0), 1.0,
                               atol=1e-9)


def test_tables_are_reproducible(blobs):
    X, oracle = blobs
    kw = dict(device_clusters_grid=[2], n_devices=8, runs=1, base_seed=5, **QUIET)
    pd.testing.assert_frame_equal(structured_vs_iid(X, oracle, **kw),
                                  structured_vs_iid(X, oracle, **kw))


def test_cost_gap_ratio_edge_cases():
    assert cost_gap_ratio(11.0, 20.0, 10.0) == 0.1
    assert cost_gap_ratio(10.0, 10.0, 10.0) == 1.0
    assert cost_gap_ratio(12.0, 10.0, 10.0) == np.inf


# ------------------------------------------------- settings do not depend on one another

def test_fig2_setting_is_independent_of_other_settings_and_data_sets(blobs):
    X, oracle = blobs
    kw = dict(n_devices=8, runs=2, base_seed=5, show_progress=False)
    alone = structured_vs_iid(X, oracle, device_clusters_grid=[2], dataset="blobs", **kw)
    both = structured_vs_iid(X, oracle, device_clusters_grid=[1, 2, 3], dataset="blobs", **kw)
    assert_same_rows(alone, both, device_clusters=2)
    # the data set is one of the names of the seed
    other = structured_vs_iid(X, oracle, device_clusters_grid=[2], dataset="other", **kw)
    assert set(other.seed).isdisjoint(set(alone.seed))


def test_fig3_algorithm_and_setting_are_independent(blobs):
    X, oracle = blobs
    kw = dict(n_devices=8, runs=1, base_seed=6, partition="structured", max_iter=300, **QUIET)
    alone = kfed_vs_distributed_lloyd(X, oracle, device_clusters_grid=[2], **kw)
    more = kfed_vs_distributed_lloyd(X, oracle, device_clusters_grid=[1, 2], **kw)
    assert_same_rows(alone, more, device_clusters=2)


def test_participation_level_is_independent_of_the_other_levels(blobs):
    X, oracle = blobs
    kw = dict(device_clusters=2, devices_per_group=5, runs=2, base_seed=7, **QUIET)
    alone = participation_sweep(X, oracle, participations=[0.5], **kw)
    more = participation_sweep(X, oracle, participations=[1.0, 0.5, 0.3], **kw)
    assert_same_rows(alone, more, participation=0.5)


def test_new_devices_fraction_is_independent_of_the_other_fractions(blobs):
    X, oracle = blobs
    kw = dict(device_clusters=2, devices_per_group=4, runs=1, base_seed=8, **QUIET)
    alone = new_devices_vs_refit(X, oracle, held_out_fractions=[0.5], **kw)
    more = new_devices_vs_refit(X, oracle, held_out_fractions=[0.25, 0.5], **kw)
    assert_same_rows(alone, more, held_out=0.5)


def test_heterogeneity_fraction_is_independent_of_the_other_fractions(blobs):
    X, oracle = blobs
    kw = dict(device_clusters=1, runs=1, base_seed=9, **QUIET)
    alone = heterogeneity_sweep(X, oracle.labels, oracle, mix_fractions=[0.5], **kw)
    more = heterogeneity_sweep(X, oracle.labels, oracle, mix_fractions=[0.0, 0.5, 1.0], **kw)
    assert_same_rows(alone, more, mix_fraction=0.5)


def test_run_experiment_reads_its_config_section(blobs):
    X, oracle = blobs
    data = PreparedData(name="femnist", X=X, y=oracle.labels, devices=oracle.labels,
                        description="blobs for a test", title="Blobs")
    cfg = {"runs": 1, "device_clusters": [1, 2, 8], "n_devices": 8}
    table = run_experiment("fig2", data, oracle, cfg, base_seed=0, show_progress=False)
    assert set(table.device_clusters) == {1, 2}  # k' = 8 > k = 4 left out
    assert set(table.data) == {"blobs for a test"} and set(table.data_title) == {"Blobs"}
    het = run_experiment("heterogeneity", data, oracle,
                         {"runs": 1, "device_clusters": 1, "mix_fractions": [0.0]},
                         base_seed=0, show_progress=False)
    assert values(het, "clusters_per_device").tolist() == [1.0]
    with pytest.raises(ValueError, match="unknown k-FED experiment 'fig9'"):
        run_experiment("fig9", data, oracle, cfg, base_seed=0)

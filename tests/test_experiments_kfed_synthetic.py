import pandas as pd
import pytest

from fedclust.papers.kfed.synthetic import (
    MIXTURE_ID_COLUMNS,
    device_clusters_for,
    mixture_trial,
    run_mixture_grid,
    run_setting,
)

from .conftest import assert_same_rows


def test_device_clusters_rule():
    assert device_clusters_for(16, "sqrt") == 4
    assert device_clusters_for(100, "sqrt") == 10
    assert device_clusters_for(10, 3) == 3
    with pytest.raises(ValueError, match="device_clusters must be 'sqrt' or an int"):
        device_clusters_for(10, 11)


def test_mixture_trial_recovers_a_well_separated_mixture():
    metrics = mixture_trial(n_features=20, n_clusters=9, device_clusters=3, devices_per_cluster=5,
                            separation=100.0, samples_per_cluster=50, seed=3)
    assert metrics["accuracy"] == 1.0
    assert metrics["n_devices"] == 15
    assert metrics["rounds"] == 1
    # 3 centers in R^20 up from each of 15 devices, one 8-byte cluster id down per center
    assert metrics["floats_up"] == 15 * 3 * 20 and metrics["bytes_down"] == 15 * 3 * 8
    assert metrics["separation_measured"] == pytest.approx(100.0)
    assert metrics["inactive_measured"] == pytest.approx(10.0)
    assert metrics["cost_ratio"] == pytest.approx(1.0, abs=0.01)


GRID = dict(experiment="fig1", n_features=10, n_clusters=4, device_clusters="sqrt",
            devices_per_cluster=2, samples_per_cluster=20, runs=2, base_seed=9,
            server_lloyd_rounds=1, inactive_to_active=0.1, show_progress=False)


def test_run_mixture_grid_is_tidy_and_reproducible():
    table = run_mixture_grid(separations=[0.05, 10.0], **GRID)
    assert list(table.columns) == list(MIXTURE_ID_COLUMNS) + ["metric", "value"]
    assert len(table[table.metric == "accuracy"]) == 4
    assert table.device_clusters.unique().tolist() == [2]
    pd.testing.assert_frame_equal(table, run_mixture_grid(separations=[0.05, 10.0], **GRID))


def test_a_separation_is_independent_of_the_others():
    alone = run_mixture_grid(separations=[0.05], **GRID)
    more = run_mixture_grid(separations=[10.0, 0.05, 1.0], **GRID)
    assert_same_rows(alone, more, separation=0.05)
    table1 = run_mixture_grid(separations=[0.05], **{**GRID, "experiment": "table1"})
    assert set(table1.seed).isdisjoint(set(alone.seed))  # the experiment names the seed


def test_run_setting_reads_the_config_section():
    settings = {"separation": 50.0, "separations": [0.1, 1.0], "device_clusters": "sqrt",
                "devices_per_cluster": 2, "samples_per_cluster": 10, "runs": 1,
                "server_lloyd_rounds": 1, "server_starts": 1, "inactive_to_active": 0.1}
    table1 = run_setting("table1", settings, n_features=6, n_clusters=4, base_seed=0,
                         show_progress=False)
    assert set(table1.separation) == {50.0}
    fig1 = run_setting("fig1", settings, n_features=6, n_clusters=4, base_seed=0,
                       show_progress=False)
    assert set(fig1.separation) == {0.1, 1.0}
    with pytest.raises(ValueError, match="experiment must be 'table1' or 'fig1'"):
        run_setting("fig3", settings, n_features=6, n_clusters=4, base_seed=0)

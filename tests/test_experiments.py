import pandas as pd
import pytest

from fedclust.experiments._seeds import run_seed
from fedclust.experiments.kfed_synthetic import (
    MIXTURE_ID_COLUMNS,
    device_clusters_for,
    mixture_trial,
    run_mixture_grid,
)
from fedclust.experiments.separation import (
    choose_k,
    oracle_kmeans,
    separation_pairs,
    separation_summary,
)
from fedclust.metrics import kmeans_cost

from .conftest import make_blobs


def test_run_seed_is_deterministic_and_keyed():
    assert run_seed(1, 2, 3) == run_seed(1, 2, 3)
    assert len({run_seed(1, 2, 3), run_seed(1, 3, 2), run_seed(2, 2, 3), run_seed(1, 2)}) == 4
    with pytest.raises(ValueError, match="non-negative"):
        run_seed(1, -1)


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
    assert metrics["floats_up"] == 15 * 3 * 20
    assert metrics["cost_ratio"] == pytest.approx(1.0, abs=0.01)


def test_run_mixture_grid_is_tidy_and_reproducible():
    kw = dict(experiment="fig1", n_features=10, n_clusters=4, device_clusters="sqrt",
              devices_per_cluster=2, separations=[0.05, 10.0], samples_per_cluster=20, runs=2,
              base_seed=9, progress=False)
    table = run_mixture_grid(**kw)
    assert list(table.columns) == list(MIXTURE_ID_COLUMNS) + ["metric", "value"]
    assert len(table[table.metric == "accuracy"]) == 4
    assert table.device_clusters.unique().tolist() == [2]
    pd.testing.assert_frame_equal(table, run_mixture_grid(**kw))


def test_oracle_kmeans_keeps_the_best_restart(rng):
    X, _, _ = make_blobs(rng, n_clusters=5, spread=3.0)
    one = oracle_kmeans(X, 5, seed=1, n_init=1)
    best = oracle_kmeans(X, 5, seed=1, n_init=6)
    assert best.inertia <= one.inertia + 1e-9
    assert best.inertia == pytest.approx(kmeans_cost(X, best.centers))


def test_separation_pairs_summary_and_choice(rng):
    X, labels, _ = make_blobs(rng, n_clusters=4, per_cluster=50, spread=40.0)
    tables = [separation_pairs(X, k, device_clusters=1, devices_per_cluster=1, base_seed=0,
                               dataset="blobs") for k in (2, 4, 6)]
    pairs = pd.concat(tables, ignore_index=True)
    assert pairs.groupby("n_clusters").size().to_dict() == {2: 1, 4: 6, 6: 15}
    summary = choose_k(separation_summary(pairs, threshold=0.5))
    # the planted 4 blobs are far apart: k = 4 keeps every pair separated, k = 6 splits a blob
    at = summary.set_index("n_clusters")
    assert at.loc[4, "share_above"] == 1.0
    assert at.loc[6, "share_above"] < 1.0
    assert summary.loc[summary.chosen, "n_clusters"].tolist() == [4]  # ties go to the larger k


def test_choose_k_breaks_ties_toward_larger_k():
    summary = pd.DataFrame({"n_clusters": [2, 3, 5], "share_above": [1.0, 1.0, 0.5]})
    assert choose_k(summary).chosen.tolist() == [False, True, False]

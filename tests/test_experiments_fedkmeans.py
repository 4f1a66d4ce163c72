import numpy as np
import pandas as pd
import pytest
import yaml

from fedclust.claims.fedkmeans import claims, sweep_means
from fedclust.experiments.federated_kmeans import (
    central_estimator,
    client_data,
    make_client_gaussians,
    progress_runs,
    sweep_runs,
)
from fedclust.lloyd import lloyd
from fedclust.metrics import davies_bouldin_centers, mean_distance
from fedclust.plots.fedkmeans import plot_progress, plot_sweep

from .conftest import REPO

SETTINGS = {
    "seeds": 2, "n_clusters": 5, "n_rounds": 40, "batch_size": None, "server_lr": 1.0,
    "server_momentum": 0.5, "server_momentum_style": "ema", "init_bounds": [0, 6],
    "reassign_fraction": 0.01, "reassign_after": 20, "sample_fractions": [0.03, 0.3],
    "data": {"n_clients": 20, "n_test_clients": 10, "samples_per_client": 10,
             "means": [1, 2, 3, 4, 5], "scale": 0.2, "assignment": "balanced"},
}


def test_client_gaussians_follow_the_papers_setup():
    X, devices, component = make_client_gaussians(50, 10, [1, 2, 3, 4, 5], 0.2, random_state=0)
    assert X.shape == (500, 1) and np.bincount(devices).tolist() == [10] * 50
    # balanced: client i holds Gaussian i mod 5, 10 clients each
    assert np.array_equal(component, np.repeat(np.arange(50) % 5, 10))
    residual = X[:, 0] - (component + 1)
    assert abs(residual.std() - 0.2) < 0.02 and abs(residual.mean()) < 0.03
    _, _, random = make_client_gaussians(50, 10, [1, 2], 0.2, assignment="random",
                                         random_state=0)
    assert set(np.unique(random)) == {0, 1}
    with pytest.raises(ValueError, match="assignment"):
        make_client_gaussians(5, 2, [1], 0.2, assignment="iid")
    with pytest.raises(ValueError, match="scale must be positive"):
        make_client_gaussians(5, 2, [1], 0.0)


def test_the_same_clients_for_every_setting_of_a_seed():
    a, b = client_data(SETTINGS["data"], 1, 7), client_data(SETTINGS["data"], 1, 7)
    np.testing.assert_array_equal(a["train"][0], b["train"][0])
    assert not np.array_equal(a["train"][0][:10], a["test"][0][:10])
    assert not np.array_equal(client_data(SETTINGS["data"], 2, 7)["train"][0], a["train"][0])


def test_central_is_lloyd_with_the_papers_start():
    data = client_data(SETTINGS["data"], 0, 3)
    X, _ = data["train"]
    model = central_estimator({**SETTINGS, "reassign_after": None}, random_state=5)
    model.fit(X, np.zeros(len(X), int))
    start = 0 + 6 * np.random.default_rng(5).random((5, 1))
    np.testing.assert_allclose(np.sort(model.cluster_centers_.ravel()),
                               np.sort(lloyd(X, start, max_iter=40).centers.ravel()))


def test_sweep_table_has_every_setting_seed_and_metric():
    spec = {"vary": "sample_fraction", "local_epochs": 1, "client_lr": 1.0}
    table = sweep_runs("figX", spec, SETTINGS, base_seed=0, show_progress=False)
    assert set(table.setting) == {"0.03", "0.3", "central"}
    assert table.groupby("setting").seed.nunique().eq(2).all()
    assert not table.value.isna().any()
    test = table[(table.split == "test")]
    assert set(test.metric) >= {"mean_distance", "davies_bouldin", "clusters_used"}
    # the recorded metrics are the model's: recompute one run's from its seed
    row = test[(test.setting == "0.3") & (test.seed == 0)].set_index("metric").value
    assert 0.1 < row["mean_distance"] < 0.5
    floats = table[(table.metric == "floats") & (table.setting == "0.3")].value
    # per round: m = 6 clients, K d down and up (floats; the counts are integers), T rounds;
    # the box is given (init_bounds), so no client reports its feature range
    assert (floats == 40 * 6 * 2 * 5).all()
    # adding a setting changes no other: its runs keep their seeds
    more = sweep_runs("figX", spec, {**SETTINGS, "sample_fractions": [0.03, 0.1, 0.3]},
                      base_seed=0, show_progress=False)
    same = more[more.setting.isin(["0.03", "0.3", "central"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(same.drop(columns="position"),
                                  table.drop(columns="position"))
    with pytest.raises(ValueError, match=r"federated_kmeans.sweeps.bad: set client_lr"):
        sweep_runs("bad", {"vary": "local_epochs", "values": [1], "sample_fraction": 0.1},
                   SETTINGS, base_seed=0, show_progress=False)


def test_metrics_against_an_independent_computation():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (30, 2)), rng.normal(8, 1, (20, 2))]
    centers = np.array([[0.5, 0.0], [7.0, 8.0]])
    d = np.sqrt(((X[:, None] - centers[None]) ** 2).sum(-1))
    labels = d.argmin(1)
    assert mean_distance(X, centers) == pytest.approx(d.min(1).mean())
    s = np.array([d[labels == j, j].mean() for j in range(2)])
    gap = np.linalg.norm(centers[0] - centers[1])
    assert davies_bouldin_centers(X, centers) == pytest.approx((s[0] + s[1]) / gap)
    # one used centre: the index is undefined
    assert np.isnan(davies_bouldin_centers(X, np.array([[4.0, 4.0], [100.0, 100.0]])))


def test_progress_table_and_figures():
    spec = {"sample_fraction": 0.3, "local_epochs": 2, "client_lr": 0.5, "n_rounds": 15}
    table = progress_runs("figP", spec, SETTINGS, base_seed=0)
    assert sorted(table["round"].unique()) == list(range(16))
    assert set(table.metric) == {"center", "spread", "rows"}
    assert table[table.metric == "rows"].groupby("round").value.sum().eq(200).all()
    assert (table[table.metric == "spread"].value >= 0).all()
    central = progress_runs("figC", {"central": True, "n_rounds": 5}, SETTINGS, base_seed=0)
    assert central["round"].max() == 5
    # the gather rule's contract: tidy
    from fedclust.io import TIDY_COLUMNS
    assert set(TIDY_COLUMNS) <= set(table.columns)
    plot_progress(table)
    sweep = sweep_runs("figX", {"vary": "client_lr", "values": [1.0, 0.1],
                                "sample_fraction": 0.3, "local_epochs": 1},
                       SETTINGS, base_seed=0, show_progress=False)
    fig = plot_sweep(sweep)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1.0", "0.1"]


def test_claims_read_the_targets_and_state_the_margins():
    targets = yaml.safe_load((REPO / "config" / "paper_targets.yaml").read_text())
    rows = []
    values = {"0.01": 0.30, "0.03": 0.27, "0.1": 0.17, "0.3": 0.16, "1.0": 0.21,
              "central": 0.20}
    for position, (setting, v) in enumerate(values.items()):
        for seed in range(2):
            for metric, value in (("mean_distance", v), ("davies_bouldin", 2 * v)):
                rows.append({"sweep": "fig1", "varied": "sample_fraction",
                             "position": position, "setting": setting,
                             "seed": seed, "split": "test", "metric": metric, "value": value})
    table = pd.DataFrame(rows)
    assert sweep_means(table, "test").set_index(["setting", "metric"]).loc[
        ("0.1", "mean_distance"), "mean"] == pytest.approx(0.17)
    out = {c.item + " / " + c.quantity: c for c in claims({"sweeps": table}, targets)}
    read = out["fig1, C = 0.1 / mean distance (test clients)"]
    assert read.paper_value == 0.17 and read.status == "pass"
    best = out["best federated setting vs central k-means (mean distance) / best federated "
               "minus central, test clients"]
    assert best.reproduced == pytest.approx(0.16 - 0.20) and best.status == "pass"
    few = [c for c in out.values() if c.item == "fig1: one client per round"][0]
    assert few.reproduced == pytest.approx(0.27 - 0.21) and few.status == "pass"


def test_real_data_runs_compare_the_three_algorithms_on_natural_clients():
    from fedclust.experiments.federated_kmeans import real_data_runs
    from fedclust.metrics import kmeans_cost
    from fedclust.plots.fedkmeans import plot_real

    rng = np.random.default_rng(0)
    centers = rng.normal(0, 8, (4, 6))
    labels = rng.integers(0, 4, 600)
    X = centers[labels] + rng.normal(0, 1, (600, 6))
    devices = labels * 5 + rng.integers(0, 5, 600)   # 20 clients, one cluster each
    oracle = kmeans_cost(X, np.array([X[labels == j].mean(0) for j in range(4)]))
    real = {"runs": 2, "init": "k-means++", "sample_fractions": [0.25, 1.0], "local_epochs": 1,
            "client_lr": 1.0, "batch_size": None, "n_rounds": 20, "kfed_device_clusters": 1,
            "localkmeans_local_steps": 2, "localkmeans_iterations": 10}
    table = real_data_runs(X, devices, oracle, 4, {**SETTINGS, "real": real},
                           dataset="toy", base_seed=0, show_progress=False)
    ratio = table[table.metric == "cost_ratio"]
    assert set(ratio.algorithm) == {"federated_kmeans", "k-fed", "localkmeans"}
    assert set(ratio[ratio.algorithm == "federated_kmeans"].setting) == {"C=0.25", "C=1"}
    assert ratio.groupby(["algorithm", "setting"]).run.nunique().eq(2).all()
    # well-separated clusters: every algorithm finds the oracle's cost (ratio 1, within noise)
    assert ratio.value.between(0.999, 1.05).all()
    floats = table[table.metric == "floats"].set_index(["algorithm", "setting", "run"]).value
    # federated k-means at C = 1: 20 rounds x 20 clients x 2 K d floats, plus the seeding
    assert floats[("federated_kmeans", "C=1", 0)] >= 20 * 20 * 2 * 4 * 6
    assert floats[("k-fed", "k'=1", 0)] < floats[("federated_kmeans", "C=1", 0)]
    plot_real(table.assign(data_title="toy"))

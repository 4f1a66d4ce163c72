import numpy as np
import pandas as pd
import pytest

from fedclust import LocalKMeans, iid_partition
from fedclust.data.prepared import PreparedData
from fedclust.metrics import misclustering_rate
from fedclust.papers.localkmeans.experiments import (
    fig1_panel,
    fig4_sweep,
    local_steps_label,
    make_orthonormal_mixture,
    noise_std_for_snr,
    parameter_sweep,
    parse_local_steps,
    perturbed_centers,
    real_data_runs,
    snr_of,
    synthetic_factory,
    trajectory_runs,
)
from fedclust.seeds import generator_for, seed_for

from .conftest import assert_same_rows

SYNTHETIC = {"n_clusters": 3, "n_features": 6, "n_machines": 4, "samples_per_machine": 60,
             "n_iter": 4, "perturbation": 0.3}


def test_snr_formula_and_its_inverse():
    # Lu & Zhou: r = (Delta / sigma) sqrt(alpha / (1 + K d / n))
    assert snr_of(2.0, 0.5, n_clusters=4, n_features=10, n_samples=360) == \
        pytest.approx(4.0 * np.sqrt(0.25 / (1 + 40 / 360)))
    sigma = noise_std_for_snr(3.01, np.sqrt(2), n_clusters=4, n_features=20, n_samples=4000)
    assert snr_of(np.sqrt(2), sigma, n_clusters=4, n_features=20, n_samples=4000) == \
        pytest.approx(3.01)


def test_orthonormal_mixture_has_the_requested_snr():
    X, labels, centers, sigma = make_orthonormal_mixture(5, 12, 2000, 2.5, random_state=0)
    np.testing.assert_allclose(centers @ centers.T, np.eye(5), atol=1e-12)
    assert np.bincount(labels).tolist() == [400] * 5
    assert snr_of(np.sqrt(2), sigma, n_clusters=5, n_features=12, n_samples=2000) == \
        pytest.approx(2.5)
    # the noise has the prescribed standard deviation
    assert np.std(X - centers[labels]) == pytest.approx(sigma, rel=0.03)
    with pytest.raises(ValueError, match="n_features must be >= 5"):
        make_orthonormal_mixture(5, 3, 100, 1.0)


def test_perturbed_centers_move_by_the_fraction_of_delta():
    centers = np.eye(3, 5) * 2.0
    moved = perturbed_centers(centers, 0.25, random_state=1)
    delta = 2.0 * np.sqrt(2)
    np.testing.assert_allclose(np.linalg.norm(moved - centers, axis=1), 0.25 * delta)


def test_local_steps_values():
    assert local_steps_label(None) == "no aggregation" and local_steps_label(3) == "L=3"
    assert parse_local_steps([1, "T/2", None], 12) == [1, 6, None]
    with pytest.raises(ValueError, match="local_steps must be >= 1"):
        parse_local_steps([0], 12)


def trajectories(**overrides):
    kw = dict(X_factory=synthetic_factory(3, 6, 600, 4.0), local_steps=[1, "T/2", None],
              n_iter=6, n_machines=6, trials=2, base_seed=0, names=("test",),
              init="perturbed", perturbation=0.3, keys={"snr": 4.0}, show_progress=False)
    return trajectory_runs(**{**kw, **overrides})


def test_trajectory_runs_table():
    table = trajectories()
    assert set(table.local_steps) == {"L=1", "L=3", "no aggregation"}
    mis = table[table.metric == "misclustering"]
    assert len(mis) == 2 * 3 * 7 and mis.value.between(0, 1).all()
    rounds = table[table.metric == "rounds"].groupby("local_steps").value.first()
    assert rounds.to_dict() == {"L=1": 7, "L=3": 3, "no aggregation": 1}
    # every L of a trial starts from the same initialization and partition
    start = mis[mis.iteration == 0].groupby("trial").value.nunique()
    assert (start == 1).all()
    # misclustering is scored outside the fit from the machines' labels: refit trial 0, L=3
    seed = seed_for(0, "localkmeans", "test", "trial=0")
    X, labels, centers = synthetic_factory(3, 6, 600, 4.0)(generator_for(seed, "data"))
    machines = iid_partition(600, 6, random_state=seed_for(seed, "machines"))
    init = perturbed_centers(centers, 0.3, seed_for(seed, "perturbation"))
    model = LocalKMeans(3, 3, n_iter=6, init=init).fit(X, devices=machines)
    final = mis[(mis.trial == 0) & (mis.local_steps == "L=3") & (mis.iteration == 6)]
    assert final.value.iloc[0] == pytest.approx(misclustering_rate(labels,
                                                                   model.machine_labels_))


def test_a_local_steps_value_is_independent_of_the_others():
    alone = trajectories(local_steps=[3])
    more = trajectories(local_steps=[1, 3, None])
    assert_same_rows(alone, more, local_steps="L=3")


def test_parameter_sweep_keeps_every_iteration_and_values_are_independent():
    def setting(m):
        return synthetic_factory(3, 6, 600, 4.0), m, {"snr": 4.0}
    kw = dict(parameter="n_machines", make_setting=setting, local_steps=[3, None], n_iter=4,
              trials=2, base_seed=0, names=("sweep",), init="k-means++", perturbation=0.3,
              show_progress=False)
    table = parameter_sweep(values=[2, 6], **kw)
    assert set(table.iteration) == set(range(5)) and set(table.n_machines) == {2, 6}
    assert set(table.sweep) == {"n_machines"}
    assert_same_rows(parameter_sweep(values=[6], **kw), table, n_machines=6)


def test_a_sweep_shares_its_trial_seeds_across_the_values():
    drawn = {}

    def setting(m):
        def factory(rng):
            drawn.setdefault(m, []).append(rng.random())
            return synthetic_factory(3, 6, 240, 4.0)(rng)
        return factory, m, {}
    kw = dict(parameter="n_machines", values=[2, 6], make_setting=setting, local_steps=[3],
              n_iter=2, trials=2, base_seed=0, names=("sweep",), init="k-means++",
              perturbation=0.3, show_progress=False)
    table = parameter_sweep(**kw)
    # trial i draws the same points at every M (common random numbers) ...
    assert drawn[2] == drawn[6] and drawn[2][0] != drawn[2][1]
    assert set(table.groupby("trial").seed.nunique()) == {1}
    # ... unless asked otherwise
    drawn.clear()
    parameter_sweep(**kw, shared_seeds=False)
    assert drawn[2] != drawn[6]


def test_fig4_k_sweep_holds_the_separation_fixed():
    syn = {**SYNTHETIC, "n_clusters": 4, "n_features": 20, "n_machines": 20,
           "samples_per_machine": 200}
    fig4 = {"local_steps": [3], "trials": 1, "init": "k-means++", "snr": [], "n_clusters":
            [2, 4, 6], "n_machines": [], "sweep_snr": 3.01, "total_samples": 4000}
    table = fig4_sweep("n_clusters", syn, fig4, base_seed=1, show_progress=False)
    geometry = table.groupby("n_clusters")[["separation", "snr"]].first()
    # the same Delta/sigma at every K: its value at r = 3.01 for K = 4, d = 20, n = 4,000
    np.testing.assert_allclose(geometry.separation, 6.0799, atol=1e-4)
    assert geometry.snr.loc[4] == pytest.approx(3.01)
    np.testing.assert_allclose(geometry.snr, [snr_of(6.0799, 1, n_clusters=k, n_features=20,
                                                     n_samples=4000) for k in (2, 4, 6)],
                               rtol=1e-4)
    assert geometry.snr.is_monotonic_decreasing  # fewer samples per cluster: r falls with K
    # the data drawn at K = 2 have that separation: sigma = sqrt(2) / 6.08
    seed = table[table.n_clusters == 2].seed.iloc[0]
    X, labels, centers = synthetic_factory(2, 20, 4000, geometry.snr.loc[2])(
        generator_for(seed, "data"))
    assert np.std(X - centers[labels]) == pytest.approx(np.sqrt(2) / 6.0799, rel=0.03)
    # the earlier reading stays available: r held, Delta/sigma growing with K
    fixed_r = fig4_sweep("n_clusters", syn, {**fig4, "n_clusters_holds": "snr"}, base_seed=1,
                         show_progress=False).groupby("n_clusters")[["separation", "snr"]].first()
    np.testing.assert_allclose(fixed_r.snr, 3.01)
    assert fixed_r.separation.is_monotonic_increasing
    # the second reading of the pipeline's K sweep: the other quantity held, the same seeds
    other = fig4_sweep("n_clusters_other", syn, fig4, base_seed=1, show_progress=False)
    assert set(other.sweep) == {"n_clusters_other"}
    plain = fig4_sweep("n_clusters", syn, {**fig4, "n_clusters_holds": "snr"}, base_seed=1,
                       show_progress=False)
    pd.testing.assert_frame_equal(other.drop(columns="sweep"), plain.drop(columns="sweep"))
    with pytest.raises(ValueError, match="n_clusters_holds"):
        fig4_sweep("n_clusters", syn, {**fig4, "n_clusters_holds": "d"}, base_seed=1)


def test_fig1_panel_and_fig4_sweep_read_their_config_sections():
    fig1 = {"local_steps": [1, None], "trials": 1}
    panel = fig1_panel(SYNTHETIC, fig1, snr=5.0, init="perturbed", base_seed=1,
                       show_progress=False)
    assert set(panel.snr) == {5.0} and set(panel.init) == {"perturbed"}
    assert set(panel.samples_per_machine) == {60}
    fig4 = {"local_steps": [3], "trials": 1, "init": "k-means++", "snr": [2.0, 5.0],
            "n_clusters": [2, 4], "n_machines": [2, 4], "sweep_snr": 3.01, "total_samples": 240}
    columns = None
    for sweep in ("snr", "n_clusters", "n_machines"):
        table = fig4_sweep(sweep, SYNTHETIC, fig4, base_seed=1, show_progress=False)
        assert set(table[sweep]) == set(fig4[sweep]) and set(table.sweep) == {sweep}
        # every sweep has the same columns, so the three tables gather into one
        assert columns is None or set(table.columns) == columns
        columns = set(table.columns)
    machines = fig4_sweep("n_machines", SYNTHETIC, fig4, base_seed=1, show_progress=False)
    assert set(machines.n_samples) == {240} and "separation" in machines
    with pytest.raises(ValueError, match="sweep must be one of"):
        fig4_sweep("n_features", SYNTHETIC, fig4, base_seed=1)


def test_real_data_runs_draw_rows_per_trial_and_name_the_data(rng):
    X = np.r_[rng.normal(0, 1, (300, 5)), rng.normal(8, 1, (300, 5))]
    data = PreparedData(name="postures", X=X, y=np.repeat([1, 2], 300),
                        devices=np.zeros(600, dtype=np.int64), description="blobs",
                        title="Two blobs")
    settings = {"n_machines": 5, "samples_per_machine": {"postures": 40}, "n_iter": 3,
                "local_steps": [1], "init": "k-means++", "trials": 2}
    table = real_data_runs(data, settings, base_seed=0, show_progress=False)
    assert set(table.n_rows) == {200} and set(table.data_title) == {"Two blobs"}
    final = table[(table.metric == "misclustering") & (table.iteration == 3)]
    assert (final.value < 0.05).all()
    whole = real_data_runs(data, {**settings, "samples_per_machine": {"postures": None}},
                           base_seed=0, show_progress=False)
    assert set(whole.n_rows) == {600}  # fewer rows than M x per machine: split whole

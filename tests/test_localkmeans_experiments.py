import numpy as np
import pandas as pd
import pytest

from fedclust.data.postures import load_postures, postures_features
from fedclust.experiments.localkmeans import (
    final_error_sweep,
    local_steps_label,
    make_orthonormal_mixture,
    noise_std_for_snr,
    perturbed_centers,
    snr_of,
    synthetic_factory,
    trajectory_runs,
)
from fedclust.plots.localkmeans import (
    normalized_objective,
    order_local_steps,
    plot_final_sweeps,
    plot_trajectories,
)
from fedclust.reproduction import localkmeans_claims


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


def test_trajectory_runs_table(tmp_path):
    table = trajectory_runs(X_factory=synthetic_factory(3, 6, 600, 4.0), local_steps=[1, "T/2",
                            None], n_iter=6, n_machines=6, trials=2, base_seed=0,
                            init="perturbed", keys={"snr": 4.0}, progress=False)
    assert set(table.local_steps) == {"L=1", "L=3", "no aggregation"}
    mis = table[table.metric == "misclustering"]
    assert len(mis) == 2 * 3 * 7 and mis.value.between(0, 1).all()
    rounds = table[table.metric == "rounds"].groupby("local_steps").value.first()
    assert rounds.to_dict() == {"L=1": 7, "L=3": 3, "no aggregation": 1}
    # every L of a trial starts from the same initialization
    start = mis[mis.iteration == 0].groupby("trial").value.nunique()
    assert (start == 1).all()
    fig = plot_trajectories(table, rows="snr", cols="init")
    assert order_local_steps(table.local_steps) == ["L=1", "L=3", "no aggregation"]
    assert len(fig.axes[0].get_lines()) == 3
    assert fig.axes[0].get_title() == "snr = 4.0, perturbed (2 trials)"
    # iterations are whole numbers: no tick between them
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) > 1 and np.all(ticks == np.round(ticks))
    objective = normalized_objective(table, ["snr", "init"])
    last = objective[(objective.iteration == 6) & (objective.local_steps == "L=1")]
    np.testing.assert_allclose(last.value, 1.0)


def test_final_error_sweep_keeps_the_last_iteration():
    def setting(m):
        return synthetic_factory(3, 6, 600, 4.0), m, {"snr": 4.0}
    table = final_error_sweep(parameter="n_machines", values=[2, 6], make_setting=setting,
                              local_steps=[3, None], n_iter=4, trials=2, base_seed=0,
                              progress=False)
    assert set(table.iteration) == {4} and set(table.n_machines) == {2, 6}
    assert set(table.sweep) == {"n_machines"}
    plot_final_sweeps(table)


def test_local_steps_label():
    assert local_steps_label(None) == "no aggregation" and local_steps_label(3) == "L=3"


def test_localkmeans_claims():
    rows = []
    for ds, finals in {"a": {"L=1": 0.10, "L=3": 0.11, "no aggregation": 0.20},
                       "b": {"L=1": 0.10, "L=3": 0.15, "no aggregation": 0.12}}.items():
        for label, value in finals.items():
            rows.append({"dataset": ds, "local_steps": label, "trial": 0, "iteration": 5,
                         "n_iter": 5, "metric": "misclustering", "value": value})
    targets = {"localkmeans": {
        "no_aggregation_worst": {"comparison": "at_least", "value": 0, "tolerance": 0},
        "few_aggregations_close": {"comparison": "at_most", "value": 0, "tolerance": 0.02}}}
    claims = localkmeans_claims(pd.DataFrame(rows), targets)
    assert [c.status for c in claims] == ["pass", "pass", "fail", "fail"]
    assert claims[0].reproduced == pytest.approx(0.09)
    # a: no aggregation worst, L=3 within 2 points; b: neither holds
    assert [c.item for c in claims] == ["Figs 2-3, a"] * 2 + ["Figs 2-3, b"] * 2
    assert claims[3].reproduced == pytest.approx(0.05)


def test_postures_loader(tmp_path):
    header = "Class,User," + ",".join(f"{a}{i}" for i in range(12) for a in "XYZ")
    zeros = ",".join(["0"] * 38)
    rows = ["1,0," + ",".join(["1.0"] * 9 + ["?"] * 27),
            "2,1," + ",".join(["3.0"] * 12 + ["?"] * 24)]
    (tmp_path / "p.csv").write_text("\n".join([header, zeros, *rows]) + "\n")
    data = load_postures(tmp_path / "p.csv")
    assert data.posture.tolist() == [1, 2] and data.user.tolist() == [0, 1]  # zeros row dropped
    X, kept = postures_features(data, max_missing=0.5)
    assert kept == [f"{a}{i}" for i in range(4) for a in "XYZ"] and X.shape == (2, 12)
    assert X[0, -1] == 3.0  # X3..Z3 missing in row 0: imputed with the column mean
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="bad.csv: header is not the UCI Postures layout"):
        load_postures(tmp_path / "bad.csv")
    (tmp_path / "txt.csv").write_text("\n".join([header, rows[0].replace("1.0", "x", 1)]))
    with pytest.raises(ValueError, match="txt.csv: column X0 holds non-numeric value 'x'"):
        load_postures(tmp_path / "txt.csv")


def test_postures_subset_of_the_mirror(mirror):
    data = load_postures(mirror / "postures" / "Postures.subset_classes1-3_users0-2.csv")
    assert len(data.posture) == 11022
    assert np.bincount(data.posture).tolist() == [0, 4377, 3105, 3540]
    X, kept = postures_features(data)
    assert X.shape == (11022, 15) and not np.isnan(X).any()

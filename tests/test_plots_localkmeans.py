import numpy as np
import pandas as pd
import pytest

from fedclust.papers.localkmeans.experiments import (
    parameter_sweep,
    synthetic_factory,
    trajectory_runs,
)
from fedclust.papers.localkmeans.figures import (
    OWN_OBJECTIVE,
    fig1_misclustering,
    fig2_misclustering_real,
    fig3_objective_real,
    fig4_sweeps,
    normalized_objective,
    order_local_steps,
)


def test_trajectories_one_line_per_l_and_whole_iterations():
    table = trajectory_runs(X_factory=synthetic_factory(3, 6, 300, 4.0),
                            local_steps=[1, "T/2", None], n_iter=6, n_machines=6, trials=2,
                            base_seed=0, names=("plot",), init="perturbed", perturbation=0.3,
                            keys={"snr": 4.0}, show_progress=False)
    fig = fig1_misclustering(table, metric="misclustering", rows="snr", cols="init")
    assert order_local_steps(table.local_steps) == ["L=1", "L=3", "no aggregation"]
    assert len(fig.axes[0].get_lines()) == 3
    assert fig.axes[0].get_title() == "snr = 4.0, perturbed (2 trials)"
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) > 1 and np.all(ticks == np.round(ticks))
    objective = normalized_objective(table, ["snr", "init"])
    last = objective[(objective.iteration == 6) & (objective.local_steps == "L=1")]
    np.testing.assert_allclose(last.value, 1.0)


def test_real_data_panels_are_titled_from_the_table():
    rows = [dict(dataset="cifar10_cnn", data_title="CIFAR-10 (official), CNN features",
                 local_steps=L, trial=0, iteration=t, n_iter=2, metric="misclustering",
                 value=0.5 - 0.1 * t) for L in ("L=1", "no aggregation") for t in range(3)]
    fig = fig2_misclustering_real(pd.DataFrame(rows), metric="misclustering", cols="dataset")
    assert " ".join(fig.axes[0].get_title().split()) == \
        "CIFAR-10 (official), CNN features (1 trials)"


def test_final_sweeps_label_the_fixed_sizes_from_the_table():
    def setting(m):
        return synthetic_factory(3, 6, 240, 4.0), m, {"snr": 4.0, "n_samples": 240}
    table = parameter_sweep(parameter="n_machines", values=[2, 4], make_setting=setting,
                              local_steps=[3, None], n_iter=3, trials=1, base_seed=0,
                              names=("plot",), init="k-means++", perturbation=0.3,
                              show_progress=False)
    fig = fig4_sweeps(table)
    # top: the L = 3 curves, one per M; bottom: the final values, every L side by side
    assert fig.axes[0].get_title(loc="left") == "(c) L=3, varying M"
    assert len(fig.axes[0].get_lines()) == 2
    assert fig.axes[1].get_xlabel() == "M (240 samples in all)"
    xs = [container.lines[0].get_xdata() for container in fig.axes[1].containers]
    assert len(xs) == 2 and not any((a == b).any() for a, b in zip(xs, xs[1:], strict=False))


def test_k_sweep_label_names_the_fixed_separation():
    def setting(k):
        return synthetic_factory(k, 6, 240, 4.0 / k), 4, {"separation": 6.08, "snr": 4.0 / k,
                                                          "samples_per_machine": 60}
    table = parameter_sweep(parameter="n_clusters", values=[2, 3], make_setting=setting,
                            local_steps=[3], n_iter=2, trials=1, base_seed=0, names=("plot",),
                            init="k-means++", perturbation=0.3, show_progress=False)
    fig = fig4_sweeps(table)
    assert fig.axes[1].get_xlabel() == "K (60 samples per machine, Δ/σ = 6.08)"


def test_objective_panel_can_add_no_aggregations_own_objective_dotted():
    table = trajectory_runs(X_factory=synthetic_factory(3, 6, 300, 2.0),
                            local_steps=[1, None], n_iter=4, n_machines=6, trials=2,
                            base_seed=0, names=("plot",), init="k-means++", perturbation=0.3,
                            keys={"dataset": "toy"}, show_progress=False)
    fig = fig3_objective_real(table, metric="objective / centralized", cols="dataset",
                            own_objective=True)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert list(lines) == ["L=1", "no aggregation", OWN_OBJECTIVE]
    assert lines[OWN_OBJECTIVE].get_linestyle() == ":"
    # both no-aggregation lines divide by centralized Lloyd's final objective of the trial
    final = table[table.iteration == 4].set_index(["metric", "local_steps", "trial"])["value"]
    final = final.sort_index()
    ref = final.loc["objective", "L=1"]
    own = (final.loc["objective", "no aggregation"] / ref).mean()
    shared = (final.loc["global_objective", "no aggregation"] / ref).mean()
    assert lines[OWN_OBJECTIVE].get_ydata()[-1] == pytest.approx(own)
    assert lines["no aggregation"].get_ydata()[-1] == pytest.approx(shared)
    assert own < shared      # each machine fits its own rows: its own objective is the lower

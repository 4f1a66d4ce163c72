import math

import numpy as np
import pandas as pd
import pytest

from fedclust.coreset import theoretical_coreset_size
from fedclust.metrics import kmeans_cost, kmedian_cost
from fedclust.papers.coreset.claims import (
    communication_for,
    graph_claims,
    ratio_at,
    tree_claims,
)
from fedclust.papers.coreset.experiments import (
    SETTING_IDS,
    baseline_runs,
    global_cost,
    make_graph,
    make_msd_mixture,
    n_clusters_of,
    setting_runs,
)
from fedclust.papers.coreset.figures import diameter, fig2, fig3
from fedclust.papers.coreset.summaries import wide_runs
from fedclust.reproduction import load_targets

SETTINGS = {"coreset_sizes": [60, 240], "zhang_coreset_sizes": [240], "n_init": 2,
            "max_iter": 50, "local_max_iter": 5, "erdos_renyi_p": 0.5, "attachment_links": 2,
            "theory": {"epsilon": 0.1, "delta": 0.1, "constant": 1.0},
            "synthetic": {"n_clusters": 4}, "n_clusters": {"mnist": 10}}


def blobs(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 10, (4, 3))
    labels = rng.integers(0, 4, n)
    return centers[labels] + rng.standard_normal((n, 3))


def run(X, graph="grid", partition="uniform", runs=2, graphs=None, **overrides):
    settings = {**SETTINGS, **overrides}
    base = baseline_runs(X, 4, settings, dataset="toy", objective="kmeans", base_seed=0,
                         runs=runs, show_progress=False)
    return setting_runs(X, 4, settings, dataset="toy", objective="kmeans",
                        graphs=[graph] if graphs is None else graphs,
                        n_sites=9, partition=partition, runs=runs, base_seed=0, baseline=base,
                        show_progress=False)


def baseline_cost(table):
    return table[table.metric == "baseline_cost"].set_index("run")["value"]


def test_msd_mixture_has_the_requested_shape_and_components():
    X, labels = make_msd_mixture(3000, 90, 50, random_state=0)
    assert X.shape == (3000, 90) and X.dtype == np.float64
    assert len(np.unique(labels)) > 40
    again, _ = make_msd_mixture(3000, 90, 50, random_state=0)
    np.testing.assert_array_equal(X, again)


def test_graphs_and_their_errors():
    assert make_graph("grid", 16).diameter == 6
    er = make_graph("erdos_renyi", 30, p=0.3, random_state=0)
    assert er.n_devices == 30
    assert make_graph("preferential_attachment", 30, attachment_links=2,
                      random_state=0).n_edges == 2 * 28
    with pytest.raises(ValueError, match="n_sites=10: a grid needs a square number"):
        make_graph("grid", 10)
    with pytest.raises(ValueError, match="graph"):
        make_graph("ring", 10)
    assert n_clusters_of("msd_mixture", SETTINGS) == 4
    with pytest.raises(ValueError, match="coreset.n_clusters has no entry for data set 'femnist'"):
        n_clusters_of("femnist", SETTINGS)


def test_global_cost_is_the_objective_of_the_nearest_centers():
    X = blobs(200)
    centers = X[:4]
    assert global_cost(X, centers, "kmeans") == pytest.approx(kmeans_cost(X, centers))
    assert global_cost(X, centers, "kmedian") == pytest.approx(kmedian_cost(X, centers))


def test_setting_rows_ratios_and_exact_communication():
    X = blobs()
    tidy = run(X)
    assert {"metric", "value"} <= set(tidy.columns)
    table = wide_runs(tidy)
    # every run: 2 sizes x (distributed on graph and tree, COMBINE) + 1 Zhang size
    assert len(table) == 2 * (2 * 3 + 1)
    assert set(table.algorithm) == {"distributed", "combine", "zhang"}
    np.testing.assert_allclose(table.cost_ratio, table.cost / table.baseline_cost)
    # well-separated blobs: at the larger size every construction finds Lloyd's solution
    # within 10% (at 60 points a run can merge two blobs)
    assert table[table.coreset_size == 240].cost_ratio.between(0.95, 1.1).all()
    grid = table[table.network == "graph"]
    # Algorithm 3 on the 3x3 grid (12 edges): each portion crosses each edge twice
    assert (grid.points_transmitted == 2 * 12 * grid.coreset_points).all()
    ours = table[(table.algorithm == "distributed")]
    # the same coreset on the graph and on the tree: the same cost, cheaper on the tree
    graph_rows = ours[ours.network == "graph"].set_index(["run", "coreset_size"])
    tree_rows = ours[ours.network == "tree"].set_index(["run", "coreset_size"])
    np.testing.assert_allclose(graph_rows.cost, tree_rows.cost)
    assert (tree_rows.points_transmitted < graph_rows.points_transmitted).all()
    # bytes: d + 1 floats of 8 bytes per point and hop, and the flooded local costs
    combine = table[table.algorithm == "combine"]
    assert (combine.bytes == combine.points_transmitted * 4 * 8).all()
    assert (graph_rows.bytes == graph_rows.points_transmitted * 4 * 8 + 2 * 12 * 9 * 8).all()
    assert (table.theoretical_size == theoretical_coreset_size(
        4, 3, 9, epsilon=0.1, delta=0.1)).all()


def test_graphs_share_a_runs_draws_unless_the_partition_uses_the_graph():
    X = blobs(600)
    graphs = ["grid", "erdos_renyi"]
    keys = ["run", "algorithm", "network", "coreset_size"]

    def by_graph(table, graph):
        rows = table[(table.graph == graph) & (table.algorithm != "zhang")]
        return rows.set_index(keys).sort_index()

    shared = wide_runs(run(X, partition="uniform", graphs=graphs))
    grid, er = by_graph(shared, "grid"), by_graph(shared, "erdos_renyi")
    # the same coresets and solutions, carried over different graphs
    np.testing.assert_array_equal(grid.cost, er.cost)
    np.testing.assert_array_equal(grid.coreset_points, er.coreset_points)
    assert (grid.points_transmitted != er.points_transmitted).any()
    # the graphs of a run are those of the graph run alone, and so are their costs
    alone = by_graph(wide_runs(run(X, graph="erdos_renyi", partition="uniform")),
                     "erdos_renyi")
    pd.testing.assert_frame_equal(er.drop(columns="seed"), alone.drop(columns="seed"))
    # the degree partition draws on every graph again: other coresets
    degree = wide_runs(run(X, partition="degree", graphs=graphs))
    assert (by_graph(degree, "grid").cost != by_graph(degree, "erdos_renyi").cost).any()
    with pytest.raises(ValueError, match="graphs must name"):
        run(X, graphs=[])


def test_a_new_coreset_size_changes_no_other_number():
    X = blobs()
    one = run(X, partition="weighted", coreset_sizes=[60])
    two = run(X, partition="weighted", coreset_sizes=[60, 240])
    keep = two[two.coreset_size.isin([60]) | (two.algorithm == "zhang")].reset_index(drop=True)
    pd.testing.assert_frame_equal(one.reset_index(drop=True), keep)


def test_solves_stop_at_the_relative_tolerance_and_tol_zero_is_the_default():
    X, _ = make_msd_mixture(4000, 10, 8, random_state=0)  # 11-19 iterations to converge
    settings = {**SETTINGS, "max_iter": 300, "n_init": 1}

    def metric(table, name):
        return table[table.metric == name].set_index("run")["value"]

    exact = baseline_runs(X, 8, settings, dataset="toy", objective="kmeans", base_seed=0,
                          runs=3, show_progress=False)
    zero = baseline_runs(X, 8, {**settings, "tol": 0}, dataset="toy", objective="kmeans",
                         base_seed=0, runs=3, show_progress=False)
    pd.testing.assert_frame_equal(exact, zero)
    loose = baseline_runs(X, 8, {**settings, "tol": 1e-3}, dataset="toy", objective="kmeans",
                          base_seed=0, runs=3, show_progress=False)
    assert (metric(loose, "n_iter") < metric(exact, "n_iter")).all()
    # the same starts, stopped early: the cost is nearly the converged one
    np.testing.assert_allclose(metric(loose, "baseline_cost"), metric(exact, "baseline_cost"),
                               rtol=1e-4)
    # the coresets' weighted solves take it too (k-median ignores it)
    assert not run(blobs(), tol=1e-2).equals(run(blobs()))


def test_baseline_runs_do_not_depend_on_their_number():
    X = blobs(400)
    three = baseline_runs(X, 4, SETTINGS, dataset="toy", objective="kmeans", base_seed=0,
                          runs=3, show_progress=False)
    one = baseline_runs(X, 4, SETTINGS, dataset="toy", objective="kmeans", base_seed=0,
                        runs=1, show_progress=False)
    assert baseline_cost(three)[0] == baseline_cost(one)[0]
    # the pipeline computes one run per job: run 2 alone is run 2 of three
    alone = baseline_runs(X, 4, SETTINGS, dataset="toy", objective="kmeans", base_seed=0,
                          runs=[2], show_progress=False)
    assert baseline_cost(alone)[2] == baseline_cost(three)[2]
    assert set(alone.run) == {2}
    with pytest.raises(ValueError, match="lacks runs"):
        setting_runs(X, 4, SETTINGS, dataset="toy", objective="kmeans", graphs=["grid"],
                     n_sites=9, partition="uniform", runs=2, base_seed=0, baseline=one,
                     show_progress=False)


@pytest.mark.parametrize("partition", ["uniform", "degree"])
def test_runs_split_over_calls_give_the_rows_of_one_call(partition):
    # the pipeline's jobs compute coreset.runs_per_job runs each: together their rows are the
    # one call's, value for value (graph-shared draws and per-graph ones)
    X = blobs(600)
    settings = {**SETTINGS, "zhang_coreset_sizes": [60]}
    base = baseline_runs(X, 4, settings, dataset="toy", objective="kmeans", base_seed=0,
                         runs=3, show_progress=False)

    def rows(runs):
        return setting_runs(X, 4, settings, dataset="toy", objective="kmeans",
                            graphs=["grid", "erdos_renyi"], n_sites=9, partition=partition,
                            runs=runs, base_seed=0, baseline=base, show_progress=False)

    def ordered(table):
        return table.sort_values([*SETTING_IDS, "metric"]).reset_index(drop=True)

    whole = rows(3)
    split = pd.concat([rows([0, 1]), rows(range(2, 3))], ignore_index=True)
    assert len(split) == len(whole)
    pd.testing.assert_frame_equal(ordered(split), ordered(whole))
    assert set(rows([2]).run) == {2}


def test_kmedian_setting_uses_distances():
    X = blobs(600)
    settings = {**SETTINGS, "zhang_coreset_sizes": [], "n_init": 5}
    base = baseline_runs(X, 4, settings, dataset="toy", objective="kmedian", base_seed=0,
                         runs=1, show_progress=False)
    table = wide_runs(setting_runs(X, 4, settings, dataset="toy", objective="kmedian",
                                   graphs=["grid"], n_sites=9, partition="degree", runs=1,
                                   base_seed=0, baseline=base, show_progress=False))
    assert (table.objective == "kmedian").all()
    assert table.cost_ratio.between(0.95, 1.1).all()
    # a k-median cost is a sum of distances: far below the k-means one of unit-noise blobs
    assert baseline_cost(base)[0] < 3 * len(X)


# ---------------------------------------------------------------- claims


def curve(xs, ratios):
    return pd.DataFrame({"x": xs, "ratio": ratios})


def test_interpolation_at_equal_communication():
    c = curve([10.0, 100.0, 1000.0], [1.3, 1.1, 1.0])
    assert ratio_at(c, 100.0) == pytest.approx(1.1)
    assert ratio_at(c, math.sqrt(10 * 100)) == pytest.approx(1.2)
    assert math.isnan(ratio_at(c, 5000.0))
    assert communication_for(c, 1.2) == pytest.approx(math.sqrt(1000))
    assert math.isnan(communication_for(c, 0.9))
    assert math.isnan(communication_for(c, 1.4))  # already below at the first point


def synthetic_runs(ours_gain: float, zhang_loss: float,
                   dataset: str = "year_prediction") -> pd.DataFrame:
    """Two sizes, 2 runs: COMBINE's ratio is 1.1 / 1.02, ours ``ours_gain`` lower; Zhang's
    curve spans ours' tree communication and is ``zhang_loss`` higher."""
    rows = []
    for partition in ("uniform", "weighted"):
        for run in range(2):
            for t, base in ((100, 1.1), (1000, 1.02)):
                common = dict(dataset=dataset, graph="grid", partition=partition, run=run,
                              coreset_size=t, coreset_points=t + 90,
                              theoretical_size=1e6)
                rows.append({**common, "algorithm": "combine", "network": "graph",
                             "points_transmitted": 24 * t, "cost_ratio": base})
                ours = base * (1 - ours_gain) if partition == "weighted" else base
                rows.append({**common, "algorithm": "distributed", "network": "graph",
                             "points_transmitted": 24 * t, "cost_ratio": ours})
                rows.append({**common, "algorithm": "distributed", "network": "tree",
                             "points_transmitted": 3 * t, "cost_ratio": ours})
            for t in (10, 100000):
                rows.append(dict(dataset=dataset, graph="grid", partition=partition, run=run,
                                 coreset_size=t, coreset_points=t, theoretical_size=1e6,
                                 algorithm="zhang", network="tree", points_transmitted=t,
                                 cost_ratio=1.1 * (1 + zhang_loss)))
    return pd.DataFrame(rows)


def test_graph_and_tree_claims_measure_the_printed_statements():
    targets = load_targets("config/paper_targets.yaml")
    claims = {c.item + " | " + c.quantity[:30]: c
              for c in graph_claims(synthetic_runs(0.03, 0.5), targets)}
    by_item = {}
    for c in claims.values():
        by_item.setdefault(c.item, []).append(c)
    uniform = by_item["Fig 2, year_prediction, grid, uniform partition"][0]
    assert uniform.reproduced == pytest.approx(0.0) and uniform.status == "pass"
    assert uniform.test == "equivalent" and uniform.n_ours == 2
    improvement, saving = by_item["Fig 2, year_prediction, grid, weighted partition"]
    assert improvement.reproduced == pytest.approx(0.03) and improvement.status == "pass"
    assert improvement.test == "in_range"
    # ours at t=100 (ratio 1.067) needs COMBINE's log-interpolated communication
    assert saving.reproduced > 0.1
    # the partitions the paper names but the run lacks are rows too, not measured: misses
    assert by_item["Fig 2, year_prediction, grid, similarity partition"][0].status == "fail"
    theory = by_item["Fig 2, year_prediction, distributed coreset"][0]
    # the uniform panel reaches 1.1 at its first size (190 points of 1e6): censored there and
    # scaled by our O() constant: reported, not tested
    assert "0.019%" in theory.note and theory.status == "reported"
    assert "O() hides a constant" in theory.provenance
    tree, communication = tree_claims(synthetic_runs(0.03, 0.2), targets)[:2]
    assert tree.item == "Fig 3, year_prediction, grid, uniform partition, spanning tree"
    # uniform: ours is COMBINE, (1.32 - 1.1) / 1.32 and (1.32 - 1.02) / 1.32: about 20%
    assert tree.reproduced == pytest.approx(0.197, abs=0.001) and tree.status == "pass"
    # Zhang's flat curve never reaches ours: their largest communication is the bound
    assert communication.reproduced > 0.9 and communication.status == "pass"
    # "about 20%" is a range, checked at its upper end too
    far = tree_claims(synthetic_runs(0.03, 0.5), targets)[0]
    assert far.reproduced > 0.3 and far.status == "fail"
    worse = tree_claims(synthetic_runs(0.0, -0.05), targets)[0]
    assert worse.reproduced < 0 and worse.status == "fail"


def test_rows_on_other_data_than_the_papers_name_their_stand_in():
    targets = load_targets("config/paper_targets.yaml")
    for dataset, words in (("msd_mixture", "stand-in data: Gaussian mixture of "
                                           "YearPredictionMSD's shape"),
                           ("mnist", "not the paper's data: MNIST")):
        runs = synthetic_runs(0.03, 0.5, dataset=dataset)
        for claim in graph_claims(runs, targets) + tree_claims(runs, targets):
            assert words in claim.stand_in, claim


# ---------------------------------------------------------------- figures


def test_figures_have_one_panel_per_graph_and_partition():
    X = blobs(600)
    tables = [run(X, graph=g, partition=p, runs=1).assign(data_title="toy blobs")
              for g in ("grid", "erdos_renyi") for p in ("uniform", "degree")]
    fig = fig3(*tables, network="tree", algorithms=("distributed", "zhang"))
    assert len(fig.axes) == 4
    assert " ".join(fig.axes[0].get_title().split()) == "spanning tree of Erdős–Rényi, uniform"
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["distributed coreset", "Zhang et al."]
    assert fig.axes[0].get_xscale() == "log"
    assert fig._suptitle.get_text().startswith("toy blobs: k-means, 9 sites, 1 runs")
    drawn = diameter(*tables[:2])
    assert [ax.get_ylabel() for ax in drawn.axes] == [
        "cost / cost of Lloyd on the global data", "points transmitted"]
    with pytest.raises(ValueError, match="no runs"):
        fig2(tables[0], network="graph", algorithms=("nothing",))


def test_job_settings_do_not_change_when_other_jobs_are_added():
    import copy

    import yaml

    from fedclust.papers.coreset.declare import job_settings
    from fedclust.pipeline.config import validate_config

    from .conftest import REPO

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate_config(config, REPO / "config" / "schema.yaml")
    before = job_settings(config, "msd_mixture")
    more = copy.deepcopy(config)
    more["coreset"]["datasets"].append("postures")
    more["coreset"]["n_clusters"]["postures"] = 5
    more["coreset"]["graphs"] = ["grid"]
    more["coreset"]["diameter"]["sides"] = [4, 20]
    assert job_settings(more, "msd_mixture") == before
    assert job_settings(more, "postures")["n_clusters"] == {"postures": 5}
    # how many runs a job computes changes no job's numbers (only which jobs exist)
    more["coreset"]["runs_per_job"] = 7
    assert job_settings(more, "msd_mixture") == before
    # what a job computes with does change it
    more["coreset"]["n_init"] = 2
    assert job_settings(more, "msd_mixture") != before
    assert job_settings(config, "msd_mixture", "kmedian")["runs"] == \
        config["coreset"]["kmedian"]["runs"]
    diameter = job_settings(config, "msd_mixture", diameter=True)["diameter"]
    assert "sides" not in diameter and diameter["partition"] == "weighted"


def test_setting_parts_chunk_the_runs_in_run_order():
    from fedclust.papers.coreset.declare import baseline_parts, run_chunks, setting_parts

    assert run_chunks(30, 10) == [(0, 9), (10, 19), (20, 29)]
    assert run_chunks(5, 10) == [(0, 4)]
    assert run_chunks(7, 3) == [(0, 2), (3, 5), (6, 6)]
    config = {"coreset": {"n_sites": 100, "runs": 7, "runs_per_job": 3,
                          "partitions": ["uniform", "degree"], "datasets": ["msd_mixture"],
                          "kmedian": {"runs": 2, "partitions": ["weighted"],
                                      "datasets": ["msd_mixture"]}}}
    prefix = "results/coreset/kmeans/msd_mixture/n100"
    assert setting_parts(config) == [
        f"{prefix}/{partition}/runs{chunk}.csv" for partition in ("uniform", "degree")
        for chunk in ("0-2", "3-5", "6-6")]
    assert setting_parts(config, "kmedian") == [
        "results/coreset/kmedian/msd_mixture/n100/weighted/runs0-1.csv"]
    # a chunk's job waits for its own runs' baselines only
    assert baseline_parts(config, "kmeans", "msd_mixture", runs=range(3, 6)) == [
        f"results/coreset/kmeans/msd_mixture/baseline/run{r}.csv" for r in (3, 4, 5)]
    assert len(baseline_parts(config, "kmeans", "msd_mixture")) == 7

"""The quick profile for real: one run of `config/ci.yaml` on a fresh copy of the workflow,
then every reproduction check on what it made. A file of its own, so that CI's other worker
(``-n 2 --dist loadfile``) takes the rest of the pipeline's tests beside it."""

import os
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fedclust.data import MNIST_FILES
from fedclust.pipeline import OUTPUT_FOLDERS

from .conftest import REPO, profile_config
from .test_workflow import copy_workflow, md5, run


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """The quick profile, run once on a fresh copy of the workflow with the offline mirror.

    ``FEDCLUST_QUICK_RUN=<folder>`` checks a quick run already finished there instead (e.g.
    after changing only the targets and rerunning ``results/reproduction.csv`` in it)."""
    from .conftest import shared_data_dir

    if os.environ.get("FEDCLUST_QUICK_RUN"):
        work = Path(os.environ["FEDCLUST_QUICK_RUN"]).resolve()
        if not (work / "results" / "reproduction.csv").is_file():
            pytest.fail(f"FEDCLUST_QUICK_RUN={work}: no results/reproduction.csv there")
        return work, {p.relative_to(work) for p in work.rglob("*")
                      if p.parts[len(work.parts)] in OUTPUT_FOLDERS}
    mirror = shared_data_dir()
    if mirror is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the offline data mirror at ../shared/data")
        pytest.skip("offline data mirror not found")
    work = copy_workflow(tmp_path_factory.mktemp("quick"))
    before = {p.relative_to(work) for p in work.rglob("*")}
    # a group-shared umask, as on a lab's cluster: every output must be group-readable
    # the timeout guards against a hung run, it is not the time budget: the quick profile's
    # wall time is measured and recorded by benchmarks/profiles.py (31-34 min on 2026-11-28's
    # slow host, 13 min on 2026-11-26's)
    run(["--cores", "2", "--configfile", "config/ci.yaml", "--config",
         f"data_mirror={mirror}"], work, timeout=3600, umask=0o002)
    created = {p.relative_to(work) for p in work.rglob("*")} - before
    return work, created


def quick_config():
    return profile_config(quick=True)


@pytest.mark.reproduction
def test_quick_profile_writes_only_data_results_and_figures(quick_run):
    work, created = quick_run
    # outputs only under data/, results/ and figures/ (and snakemake's own bookkeeping);
    # the jobs import this checkout's src, so Python's and numba's caches of its compiled
    # code land in its __pycache__ folders, as in any checkout
    outputs = {p for p in created if "__pycache__" not in p.parts}
    assert {p.parts[0] for p in outputs} <= {*OUTPUT_FOLDERS, ".snakemake"}
    # with the user's umask (002: group-writable), not owner-only temporary-file modes
    for path in ("results/reproduction.csv", "results/kfed/fig2.csv",
                 "figures/kfed_fig2_structured_vs_iid.png", "data/mnist/features.h5",
                 "data/mnist/raw/train-labels-idx1-ubyte.gz", "results/kfed/table1.md"):
        assert (work / path).stat().st_mode & 0o777 == 0o664, path
    # no hidden temporary file is left anywhere
    assert not [p for p in created if p.name.startswith(".") and p.parts[0] != ".snakemake"]
    # every job applied its threads and logged plain lines (no progress-bar redraws)
    log = (work / "results" / "logs" / "kfed" / "oracle" / "mnist_k2.log").read_text()
    assert "rule kfed_oracle: 1 thread(s)" in log  # as its rule declares (one since b41ac63)
    train = (work / "results" / "logs" / "data" / "train_cifar10_cnn.log").read_text()
    assert "\r" not in train and len(train) < 5000
    # every data file the run read, with its sha256: MNIST's raw files as published, every
    # cache as its sidecar says
    from fedclust.io import sha256_of

    from .conftest import shared_data_dir

    sums = pd.read_csv(work / "results" / "data_checksums.csv").set_index("file")
    for remote in MNIST_FILES.values():
        path = f"data/mnist/raw/{remote.name}"
        assert md5(work / path) == remote.md5 and sums.loc[path, "sha256"] == sha256_of(
            work / path)
    sidecar = (work / "data" / "mnist" / "features.h5.sha256").read_text().split()[0]
    assert sums.loc["data/mnist/features.h5", "sha256"] == sidecar
    # read in place from the mirror (the pipeline names it resolved: ../shared may be a link)
    assert any(f.startswith(str(shared_data_dir().resolve()) + "/femnist/leaf_sample_")
               for f in sums.index)


#: The quick profile's verdicts as recorded on AMD EPYC hosts; ``quick_verdicts_<cpu>.csv``
#: holds them for kernels compiled for another CPU (:func:`expected_verdicts`).
EXPECTED_VERDICTS = REPO / "tests" / "data" / "quick_verdicts.csv"


def expected_verdicts(work: Path) -> tuple[Path, str]:
    """The expectation for the CPU the run's kernels were compiled for (its run_config's
    ``machine.kernels_for``, or this host's): ``quick_verdicts_<cpu>.csv`` where one was
    recorded, else :data:`EXPECTED_VERDICTS`. The kernels' last bits, and a verdict near the
    edge of its band, depend on that CPU (docs/reproduction.md). Returns the file and the
    CPU."""
    from fedclust.io import kernel_cpu

    run_config = yaml.safe_load((work / "results" / "run_config.yaml").read_text())
    cpu = run_config["provenance"]["machine"].get("kernels_for") or kernel_cpu()
    specific = EXPECTED_VERDICTS.with_name(f"quick_verdicts_{cpu}.csv")
    return (specific if specific.is_file() else EXPECTED_VERDICTS), cpu


@pytest.mark.reproduction
def test_every_figure_of_the_quick_profile_reads_well(quick_run):
    """No figure job logged a layout problem (overlapping tick labels or legend entries,
    legend text under 8 pt, a legend over data: fedclust.plots._style.layout_problems)."""
    work, _ = quick_run
    logs = sorted((work / "results" / "logs").glob("*/figure_*.log"))
    assert len(logs) >= 40
    problems = [f"{log.relative_to(work)}: {line.split('layout problem: ', 1)[1]}"
                for log in logs for line in log.read_text().splitlines()
                if "layout problem: " in line]
    assert not problems, "\n".join(problems)


@pytest.mark.reproduction
def test_every_quick_profile_verdict_is_the_committed_one(quick_run):
    """A verdict that changes, in either direction, fails CI, and so does a row's definition
    (its test and the paper's side of it): the expectation changes only in a commit that says
    why (``expectation(report).to_csv(EXPECTED_VERDICTS, index=False)``, or the file of
    :func:`expected_verdicts` for the run's CPU)."""
    from fedclust.reproduction import VERDICTS, definition_changes, verdict_changes

    work, _ = quick_run
    report = pd.read_csv(work / "results" / "reproduction.csv")
    assert set(report.status) <= set(VERDICTS)
    path, cpu = expected_verdicts(work)
    expected = pd.read_csv(path, keep_default_na=False, dtype=str)
    moved = definition_changes(report, expected)
    assert moved.empty, (f"{len(moved)} rows' tests differ from {path.name}:\n"
                         + moved.to_string(max_colwidth=40))
    changes = verdict_changes(report, expected)
    assert changes.empty, (
        f"{len(changes)} verdicts differ from {path.name} (kernels compiled for {cpu}; "
        f"expected -> now):\n" + changes.to_string(max_colwidth=60)
        + f"\n(the run's rows: {work / 'results' / 'reproduction.csv'})")
    # every row that does not pass says why, with what was measured
    missed = report[report.status.isin(["fail", "not at this profile", "not shown"])]
    assert missed.explanation.fillna("").str.len().gt(20).all(), missed[["item", "quantity"]]
    text = (work / "results" / "reproduction.md").read_text()
    counts = report.status.value_counts()
    assert ", ".join(f"**{int(counts.get(v, 0))} {v}**" for v in VERDICTS) in text


@pytest.mark.reproduction
def test_quick_profile_reproduces_table1_and_fig5_on_real_data(quick_run):
    work, _ = quick_run
    # the data came from the mirror and is the official MNIST
    for remote in MNIST_FILES.values():
        assert md5(work / "data" / "mnist" / "raw" / remote.name) == remote.md5

    # Table 1: recompute each row's mean accuracy from the runs and compare with the paper's
    quick = quick_config()["kfed"]["table1"]
    targets = yaml.safe_load((REPO / "config" / "paper_targets.yaml").read_text())
    table1 = targets["kfed"]["table1"]
    runs = pd.read_csv(work / "results" / "kfed" / "table1.csv")
    acc = runs[runs.metric == "accuracy"]
    assert set(acc.devices_per_cluster) == {5} and set(acc.separation) == {100.0}
    report = pd.read_csv(work / "results" / "reproduction.csv")
    t1 = report[report.key == "kfed.table1"].set_index("item")
    assert len(t1) == len(table1["rows"])
    for row in table1["rows"]:
        sel = acc[(acc.n_features == row["n_features"]) & (acc.n_clusters == row["n_clusters"])]
        assert len(sel) == quick["runs"]
        assert set(sel.device_clusters) == {round(row["n_clusters"] ** 0.5)}
        # the test, recomputed from the runs: our mean and spread against the printed mean
        # +- std over the paper's runs, plus half the last printed digit (Welch)
        from fedclust.verdicts import Spread, same_value

        expected = same_value(Spread.of(sel.value),
                              Spread(row["value"], row["std"], table1["runs"]),
                              table1["printed_precision"]).verdict
        verdict = t1.loc[f"Table 1, d={row['n_features']}, k={row['n_clusters']}", "status"]
        assert verdict == expected, row

    # Fig 5 is drawn from real MNIST: every pair of oracle clusters for every k of the grid
    cfg = quick_config()
    grid = cfg["kfed"]["separation"]["k_grid"]
    pairs = pd.read_csv(work / "results" / "kfed" / "separation" / "mnist" / "pairs.csv")
    assert pairs.groupby("n_clusters").size().to_dict() == {k: k * (k - 1) // 2 for k in grid}
    assert set(pairs.n_samples) == {cfg["datasets"]["mnist"]["max_samples"]}
    chosen = pd.read_csv(work / "results" / "kfed" / "separation" / "mnist" / "chosen_k.csv")
    assert len(chosen) == 1 and chosen.n_clusters.iloc[0] in grid
    for fig in ("kfed_fig1_accuracy_vs_separation", "kfed_fig5_separation_mnist"):
        assert (work / "figures" / f"{fig}.png").stat().st_size > 10_000
        assert (work / "figures" / f"{fig}.pdf").stat().st_size > 5_000


@pytest.mark.reproduction
def test_quick_profile_reproduces_the_federated_claims_on_femnist_and_shakespeare(quick_run):
    work, _ = quick_run
    cfg = quick_config()
    report = pd.read_csv(work / "results" / "reproduction.csv")
    for ds in ("femnist", "shakespeare"):
        # the oracle analysis ran on the real data (LEAF writers, LEAF roles)
        summary = pd.read_csv(work / "results" / "kfed" / "separation" / ds / "summary.csv")
        assert summary.n_clusters.tolist() == cfg["kfed"]["separation"]["k_grid"]
        chosen = int(pd.read_csv(work / "results" / "kfed" / "separation" / ds /
                                 "chosen_k.csv").n_clusters.iloc[0])
        # Fig 2: structured closer to the oracle than IID, recomputed from the runs
        fig2 = pd.read_csv(work / "results" / "kfed" / "fig2.csv")
        sub = fig2[(fig2.dataset == ds) & (fig2.device_clusters < chosen)]
        assert set(sub.n_clusters) == {chosen}
        assert set(sub.n_devices) == {cfg["kfed"]["fig2"]["n_devices"]}   # same Z for every k'
        mean = sub.groupby("metric").value.mean()
        assert mean["structured_cost"] - mean["oracle_cost"] < \
            mean["iid_cost"] - mean["oracle_cost"]
        claims = report[report.item == f"Fig 2, {ds}"]
        assert len(claims) == 3 and "by construction" in set(claims.status)
        # Fig 3: k-FED's cost within 10% of naive distributed k-means, in one round
        fig3 = pd.read_csv(work / "results" / "kfed" / "fig3.csv")
        sub = fig3[fig3.dataset == ds]
        # the oracle k of Fig 2 ("the same oracle clustering"), several k'
        assert set(sub.n_clusters) == {chosen}
        k_primes = cfg["kfed"]["fig3"]["device_clusters"]
        assert sorted(sub.device_clusters.unique()) == k_primes
        cost = sub[sub.metric == "cost"].groupby(["device_clusters", "algorithm"]).value.mean()
        for k_prime in k_primes:
            assert cost[(k_prime, "k-FED")] <= 1.1 * cost[(k_prime, "distributed Lloyd")]
        rounds = sub[sub.metric == "rounds"].groupby("algorithm").value
        assert rounds.max()["k-FED"] == 1 and rounds.min()["distributed Lloyd"] > 1
        # the naive baseline's Lloyd rounds are reported apart from its seeding rounds
        lloyd = sub[(sub.metric == "lloyd_rounds") & (sub.algorithm == "distributed Lloyd")]
        seeding = sub[(sub.metric == "seeding_rounds") & (sub.algorithm == "distributed Lloyd")]
        assert (lloyd.value > 0).all() and (seeding.value == 2 * chosen).all()
        # k-FED's download is k^(z) cluster identities per device (8-byte integers), no floats
        kfed = sub[sub.algorithm == "k-FED"].groupby("metric").value.max()
        assert kfed["floats_down"] == 0 and kfed["bytes_down"] > 0
        assert kfed["bytes_down"] % 8 == 0
        claims = report[report.item.str.startswith(f"Fig 3, {ds}")]
        assert len(claims) == 2 * len(k_primes)
    # every beyond-the-paper experiment produced its table and figure for both data sets
    for experiment in ("participation", "new_devices", "heterogeneity"):
        table = pd.read_csv(work / "results" / "kfed" / f"{experiment}.csv")
        assert set(table.dataset) == {"femnist", "shakespeare"}
        assert (work / "figures" / f"kfed_{experiment}.png").stat().st_size > 10_000
    for fig in ("kfed_fig2_structured_vs_iid", "kfed_fig3_kfed_vs_distributed_lloyd"):
        assert (work / "figures" / f"{fig}.png").stat().st_size > 10_000


@pytest.mark.reproduction
def test_quick_profile_reproduces_localkmeans_on_synthetic_and_real_data(quick_run):
    work, _ = quick_run
    cfg = quick_config()["localkmeans"]
    # Figures 1-4 are drawn
    for fig in ("fig1_misclustering", "fig4_sweeps", "fig2_misclustering_real",
                "fig3_objective_real"):
        assert (work / "figures" / f"localkmeans_{fig}.png").stat().st_size > 10_000
    # Figure 1: L = 1 is centralized Lloyd, every L starts from the same initialization
    fig1 = pd.read_csv(work / "results" / "localkmeans" / "fig1.csv")
    assert set(fig1.snr) == set(cfg["fig1"]["snrs"])
    assert fig1.trial.nunique() == cfg["fig1"]["trials"]
    # the embeddings were trained here, with their test accuracy recorded beside them
    mnist = pd.read_csv(work / "results" / "embeddings" / "mnist_cnn.csv").iloc[0]
    cifar = pd.read_csv(work / "results" / "embeddings" / "cifar10_cnn.csv").iloc[0]
    assert mnist.embedding_dim == 1568 and mnist.test_accuracy > 0.95
    assert cifar.embedding_dim == 512 and cifar.test_accuracy > 0.3
    assert "JPEG re-encoding (lossy approximation)" in cifar.source
    # Figures 2-3 claims on every real data set, recomputed from the runs
    real = pd.read_csv(work / "results" / "localkmeans" / "real.csv")
    report = pd.read_csv(work / "results" / "reproduction.csv")
    for ds in cfg["real"]["datasets"]:
        final = real[(real.dataset == ds) & (real.metric == "misclustering")
                     & (real.iteration == cfg["real"]["n_iter"])]
        mean = final.groupby("local_steps").value.mean()
        assert mean["no aggregation"] >= mean.drop("no aggregation").max()
        claims = report[report.item == f"Figs 2-3, {ds}"]
        assert len(claims) >= 2


@pytest.mark.reproduction
def test_quick_profile_reproduces_the_distributed_coreset_figures(quick_run):
    work, _ = quick_run
    cfg = quick_config()["coreset"]
    graphs = pd.read_csv(work / "results" / "coreset" / "graphs.csv")
    ratio = graphs[graphs.metric == "cost_ratio"]
    # every panel of Figs 2-3 on every run, every construction at every size
    assert ratio.groupby(["graph", "partition"]).run.nunique().eq(cfg["runs"]).all()
    assert len(ratio.groupby(["graph", "partition"])) == len(cfg["graphs"]) * len(
        cfg["partitions"])
    assert set(ratio.algorithm) == {"distributed", "combine", "zhang"}
    # the largest coreset of ours and COMBINE solves within 10% of Lloyd on the global data,
    # on average (Zhang et al.'s coresets of coresets lose more on the deep grid trees)
    largest = ratio[(ratio.coreset_size == max(cfg["coreset_sizes"]))
                    & ratio.algorithm.isin(["distributed", "combine"])]
    assert largest.groupby("algorithm").value.mean().between(0.95, 1.10).all()
    for name in ("fig2", "fig3", "fig2_bytes", "fig3_bytes", "kmedian"):
        assert (work / "figures" / f"coreset_{name}_msd_mixture.png").exists()
    assert (work / "figures" / "coreset_diameter.png").exists()
    report = pd.read_csv(work / "results" / "reproduction.csv")
    claims = report[report.paper.str.startswith("Distributed coresets")]
    checked = claims[claims.status != "reported"]
    # a row per panel: Fig 2's four partitions' statements (the weighted and degree-based ones
    # two each) on every graph, whether run or not; Fig 3's two on every panel run
    n_graphs, n_panels = len(cfg["graphs"]), len(cfg["graphs"]) * len(cfg["partitions"])
    assert len(checked) == n_graphs * (2 + 2 * 2) + 2 * n_panels
    # the mirror lacks YearPredictionMSD: every row names the stand-in it ran on
    assert checked.stand_in.str.contains("stand-in data: Gaussian mixture").all()


@pytest.mark.reproduction
def test_quick_profile_reproduces_federated_kmeans(quick_run):
    work, _ = quick_run
    cfg = quick_config()["fedkmeans"]
    sweeps = pd.read_csv(work / "results" / "fedkmeans" / "sweeps.csv")
    # every sweep of the paper on every seed, central k-means beside every sweep of C, and
    # the second readings the config declares (Fig 5 with the authors' reassignment rule)
    assert {"fig1", "fig2a", "fig2b", "fig3a", "fig3b", "fig4a", "fig4b", "fig5a",
            "fig5b"} <= set(sweeps.sweep) == set(cfg["sweeps"])
    assert sweeps.groupby("sweep").seed.nunique().eq(cfg["seeds"]).all()
    # one job wrote every sweep (fedkmeans.batch_sweeps): each file holds its own sweep
    for part in (work / "results" / "fedkmeans" / "sweeps").glob("*.csv"):
        assert set(pd.read_csv(part, usecols=["sweep"]).sweep) == {part.stem}
    assert set(sweeps[sweeps.varied == "sample_fraction"].setting) == {
        "0.01", "0.03", "0.1", "0.3", "1.0", "central"}
    for name in (*sorted(set(sweeps.sweep)),):
        assert (work / "figures" / f"fedkmeans_sweep_{name}.png").exists()
    for name in ("fig6", "fig7a", "fig7b"):
        assert (work / "figures" / f"fedkmeans_progress_{name}.png").exists()
    report = pd.read_csv(work / "results" / "reproduction.csv")
    claims = report[report.paper.str.startswith("Federated k-means")]
    # the text's claim: the best federated setting matches or beats central k-means on both
    # metrics of the test clients
    match = claims[claims.item.str.startswith("best federated setting")]
    assert len(match) == 2


@pytest.mark.reproduction
def test_quick_profile_reproduces_the_kfed_applications(quick_run):
    """Table 2 on rotated MNIST and Fig 4 on FEMNIST and Shakespeare: every cell and curve,
    and the orderings the paper states."""
    work, _ = quick_run
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["kfed"]
    table2 = pd.read_csv(work / "results" / "kfed" / "table2.csv")
    cells = set(zip(table2.n_devices, table2.device_clusters, table2.method, strict=True))
    assert cells == {(z, kp, m) for z in cfg["table2"]["n_devices"]
                     for kp in cfg["table2"]["device_clusters"] for m in cfg["table2"]["methods"]}
    fig4 = pd.read_csv(work / "results" / "kfed" / "fig4.csv")
    assert set(zip(fig4.dataset, fig4.strategy, strict=True)) == {
        (ds, s) for ds in cfg["fig4"]["datasets"] for s in cfg["fig4"]["strategies"]}
    # one job per data set wrote its strategies (kfed.fig4.batch_strategies): each file holds
    # its own data set and strategy
    for table in ("fig4", "fig4_devices"):
        for part in (work / "results" / "kfed" / table).glob("*.csv"):
            rows = pd.read_csv(part, usecols=["dataset", "strategy"])
            assert {f"{d}_{s}" for d, s in zip(rows.dataset, rows.strategy, strict=True)} == {
                part.stem}
    for name in ("table2_rotated_mnist", "fig4_client_selection_femnist",
                 "fig4_client_selection_shakespeare"):
        assert (work / "figures" / f"kfed_{name}.png").stat().st_size > 10_000
    report = pd.read_csv(work / "results" / "reproduction.csv")
    claims = report[report.paper.str.startswith("k-FED")]
    # all four cells: IFCA and k-FED above one global model, k-FED sending k'/k of IFCA's floats
    above = claims[claims.quantity.str.endswith("minus Global")]
    assert len(above) == 8
    comm = claims[claims.quantity.str.startswith("floats sent down per round")]
    assert sorted(comm.reproduced) == [0.25, 0.25, 0.5, 0.5]
    assert (comm.status == "by construction").all()
    femnist = claims[claims.item == "Fig 4, femnist"]
    assert len(femnist) == 4
    # the printed accuracies sit beside ours, every cell measured
    printed = claims[claims.quantity.str.match(r"test accuracy, (Global|IFCA|k-FED)$")]
    assert len(printed) == 12 and printed.reproduced.notna().all()


def _report_results(path):
    """The files of a Snakemake HTML report (its ``var results = {...}``): path -> entry with
    the rendered ``caption`` and, for a text file, its decoded ``text``."""
    import base64
    import json

    html = path.read_text()
    start = html.index("var results = {") + len("var results = ")
    results, _ = json.JSONDecoder().raw_decode(html, start)
    for name, entry in results.items():
        if name.endswith((".md", ".yaml", ".csv")):
            encoded = entry["data_uri"].partition("base64,")[2]
            entry["text"] = base64.b64decode(encoded).decode()
    return results


@pytest.mark.reproduction
def test_the_report_shows_every_figure_with_its_caption_the_claims_and_the_run(quick_run):
    import html

    from fedclust.pipeline import registry

    work, _ = quick_run
    from .conftest import shared_data_dir
    run(["--report", "report.html", "--configfile", "config/ci.yaml", "--config",
         f"data_mirror={shared_data_dir()}"], work)
    results = _report_results(work / "report.html")
    config = quick_config()

    def text(caption):
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", caption)).split())

    figures = [f"figures/{paper}_{name}.png" for paper, names in
               registry.figure_names(config).items() for name in names]
    assert len(figures) >= 40 and set(figures) <= set(results)
    for name in figures:
        paper, figure = name.removeprefix("figures/").removesuffix(".png").split("_", 1)
        expected = " ".join(registry.figure_caption(paper, figure, config).split())
        shown = text(results[name]["caption"])
        # what it reproduces, in its first words (RST markup aside)
        assert re.sub(r"\W", "", shown)[:50] == re.sub(r"\W", "", expected)[:50], name
        assert len(shown) > 0.8 * len(expected)  # deviations included, not cut short
    reproduction = results["results/reproduction.md"]["text"]
    for paper in ("k-FED", "LocalKMeans", "Balcan", "Triebe", "Cross-paper comparison"):
        assert paper in reproduction
    run_config = yaml.safe_load(results["results/run_config.yaml"]["text"])
    assert run_config["config"]["profile"] == "quick"
    assert set(run_config["versions"]) >= {"python", "numpy", "scikit-learn", "snakemake"}
    assert set(run_config["provenance"]) == {"commit", "dirty", "machine", "blas"}


@pytest.mark.reproduction
def test_quick_profile_compares_every_algorithm_on_the_same_partitions(quick_run):
    """The cross-paper comparison: every algorithm on every data set and partition, the
    dropout and heterogeneity sweeps, and the measured statements."""
    from fedclust.papers.comparison import declare as comparison
    from fedclust.papers.comparison.experiments import fits

    work, _ = quick_run
    config = quick_config()
    table = pd.read_csv(work / "results" / "comparison" / "table.csv")
    assert set(zip(table.dataset, table.partition, strict=True)) == set(
        comparison.settings(config))
    families = {fit.algorithm for fit in fits(config["comparison"], n_clusters=2)}
    assert set(table.algorithm) == {"centralized"} | families
    assert set(table.dropout) == set(config["comparison"]["dropout"])
    for metric in ("cost_ratio", "agreement", "rounds", "floats_up", "bytes_down", "wall_s",
                   "peak_mb"):
        assert metric in set(table.metric)
    # accuracy where the data set has k classes: the mixture and MNIST
    assert set(table[table.metric == "accuracy"].dataset) == {"mixture", "mnist"}
    heterogeneity = pd.read_csv(work / "results" / "comparison" / "heterogeneity.csv")
    assert set(heterogeneity.partition) == {"mix=0", "mix=1"}
    claims = pd.read_csv(work / "results" / "comparison" / "claims.csv")
    factor = claims[claims.quantity == "k-FED cost / best multi-round cost"]
    assert len(factor) == len(config["comparison"]["datasets"])
    # a cross-paper measurement has no printed value: reported, never judged
    assert set(claims.status) == {"reported"}
    for name in ("pareto_bytes", "pareto_rounds", "dropout", "heterogeneity"):
        assert (work / "figures" / f"comparison_{name}.png").stat().st_size > 10_000


def test_the_expectation_is_the_one_recorded_for_the_kernels_cpu(tmp_path):
    """A run whose kernels were compiled for a CPU with its own expectation is held to it,
    any other to quick_verdicts.csv; every CPU's file has the same rows and definitions, and
    differs only in verdicts."""
    from fedclust.reproduction import definition_changes

    (tmp_path / "results").mkdir()
    for cpu, name in (("emeraldrapids", "quick_verdicts_emeraldrapids.csv"),
                      ("znver3", EXPECTED_VERDICTS.name)):
        (tmp_path / "results" / "run_config.yaml").write_text(
            yaml.safe_dump({"provenance": {"machine": {"kernels_for": cpu}}}))
        assert expected_verdicts(tmp_path) == (EXPECTED_VERDICTS.with_name(name), cpu)
    default = pd.read_csv(EXPECTED_VERDICTS, keep_default_na=False, dtype=str)
    for path in EXPECTED_VERDICTS.parent.glob("quick_verdicts_*.csv"):
        other = pd.read_csv(path, keep_default_na=False, dtype=str)
        assert len(other) == len(default), path.name
        assert definition_changes(other, default).empty, path.name

"""The pipeline itself: lint, dry runs of both profiles, and the quick profile for real."""

import hashlib
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from fedclust.data import MNIST_FILES

from .conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
WORKFLOW_FILES = ("Snakefile", "config", "workflow", "src", "environment.yml")


def copy_workflow(dest):
    """A copy of the workflow files, as a fresh clone would have them (no results, no data)."""
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def run(args, cwd, timeout=1800):
    env = dict(os.environ, PYTHONHASHSEED="0")
    result = subprocess.run(SNAKEMAKE + args, cwd=cwd, capture_output=True, text=True,
                            timeout=timeout, env=env)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result


def test_lint_is_clean(tmp_path):
    result = run(["--lint"], copy_workflow(tmp_path))
    assert "Congratulations" in result.stdout + result.stderr


@pytest.mark.parametrize("extra", [[], ["--configfile", "config/ci.yaml"]])
def test_dry_run_on_a_fresh_copy(tmp_path, extra):
    result = run(["-n", "--cores", "2", *extra], copy_workflow(tmp_path))
    assert "fetch_mnist" in result.stdout and "reproduction" in result.stdout


def test_bad_config_stops_with_the_key_named(tmp_path):
    work = copy_workflow(tmp_path)
    result = subprocess.run(SNAKEMAKE + ["-n", "--config", "seed=-3"], cwd=work,
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "seed" in result.stdout + result.stderr


def md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.mark.reproduction
def test_quick_profile_reproduces_table1_and_fig5_on_real_data(tmp_path, mirror):
    work = copy_workflow(tmp_path)
    before = {p.relative_to(work) for p in work.rglob("*")}
    run(["--cores", "2", "--configfile", "config/ci.yaml", "--config",
         f"data_mirror={mirror}"], work)

    # outputs only under data/, results/ and figures/ (and snakemake's own bookkeeping)
    created = {p.relative_to(work) for p in work.rglob("*")} - before
    assert {p.parts[0] for p in created} <= {"data", "results", "figures", ".snakemake"}

    # the data came from the mirror and is the official MNIST
    for remote in MNIST_FILES.values():
        assert md5(work / "data" / "mnist" / "raw" / remote.name) == remote.md5

    # Table 1: recompute each row's mean accuracy from the runs and compare with the paper's
    quick = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())["kfed"]["table1"]
    targets = yaml.safe_load((REPO / "config" / "paper_targets.yaml").read_text())
    table1 = targets["kfed"]["table1"]
    runs = pd.read_csv(work / "results" / "kfed" / "table1.csv")
    acc = runs[runs.metric == "accuracy"]
    assert set(acc.devices_per_cluster) == {5} and set(acc.separation) == {100.0}
    for row in table1["rows"]:
        sel = acc[(acc.n_features == row["n_features"]) & (acc.n_clusters == row["n_clusters"])]
        assert len(sel) == quick["runs"]
        assert set(sel.device_clusters) == {round(row["n_clusters"] ** 0.5)}
        assert abs(sel.value.mean() - row["value"]) <= table1["tolerance"], row
    report = pd.read_csv(work / "results" / "reproduction.csv")
    t1 = report[report.item.str.startswith("Table 1")]
    assert len(t1) == len(table1["rows"]) and (t1.status == "pass").all()
    assert "fail" not in set(report.status)

    # Fig 5 is drawn from real MNIST: every pair of oracle clusters for every k of the grid
    grid = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())["kfed"]["mnist_separation"]
    pairs = pd.read_csv(work / "results" / "kfed" / "fig5_pairs.csv")
    assert pairs.groupby("n_clusters").size().to_dict() == {
        k: k * (k - 1) // 2 for k in grid["k_grid"]}
    assert set(pairs.n_samples) == {grid["max_samples"]} and set(pairs.dataset) == {"MNIST"}
    chosen = pd.read_csv(work / "results" / "kfed" / "mnist_chosen_k.csv")
    assert len(chosen) == 1 and chosen.n_clusters.iloc[0] in grid["k_grid"]
    for fig in ("kfed_fig1_accuracy_vs_separation", "kfed_fig5_mnist_separation"):
        assert (work / "figures" / f"{fig}.png").stat().st_size > 10_000
        assert (work / "figures" / f"{fig}.pdf").stat().st_size > 5_000

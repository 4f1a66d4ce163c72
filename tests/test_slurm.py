"""The pipeline through a real SLURM cluster with `--profile workflow/profiles/slurm`.

Runs only with FEDCLUST_TEST_SLURM=1 (.ci/run sets it once .ci/slurm-up.sh has started a
one-node cluster); with it set, a missing `sbatch` fails the test instead of skipping it.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from .conftest import REPO, profile_config
from .test_workflow import copy_workflow, run

TARGET = "results/kfed/table1.md"
SUBMITTED = re.compile(
    r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.")


def require_slurm():
    """Skip unless asked for; once asked for, a missing or silent SLURM is a failure."""
    if os.environ.get("FEDCLUST_TEST_SLURM") != "1":
        pytest.skip("SLURM test off: start a cluster (.ci/slurm-up.sh), set FEDCLUST_TEST_SLURM=1")
    if shutil.which("sbatch") is None:
        pytest.fail("FEDCLUST_TEST_SLURM=1 but sbatch is not on PATH (run .ci/slurm-up.sh)")
    sinfo = subprocess.run(["sinfo", "-h", "-o", "%P %a %T"], capture_output=True, text=True)
    assert sinfo.returncode == 0 and sinfo.stdout.strip(), \
        f"SLURM does not answer: {sinfo.stdout}{sinfo.stderr}"


def squeue_states(run_id):
    """SLURM job id -> state of every job of one Snakemake run (finished ones included)."""
    out = subprocess.run(["squeue", "--states=all", "--noheader", "--format=%i|%T",
                          "--name", run_id], capture_output=True, text=True, check=True)
    return dict(line.split("|") for line in out.stdout.split())


def test_slurm_profile_runs_table1_through_sbatch(tmp_path):
    require_slurm()
    work = copy_workflow(tmp_path)
    # the profile as a user runs it, plus: keep the SLURM logs of successful jobs (to check
    # them below) and poll every second rather than every 40 s (to keep CI short)
    result = run(["--profile", "workflow/profiles/slurm", "--configfile", "config/ci.yaml",
                  "--slurm-keep-successful-logs",
                  "--slurm-init-seconds-before-status-checks", "1",
                  "--seconds-between-status-checks", "1", TARGET], work, timeout=900)
    output = result.stdout + result.stderr

    # every compute job of the DAG went through sbatch, one per (d, k) setting; the gather and
    # the Markdown table are localrules (seconds long) and run on the submitting host
    settings = profile_config(quick=True)["kfed"]["table1"]
    submitted = SUBMITTED.findall(output)
    assert len(submitted) == len(settings["settings"]), output[-4000:]
    slurm_ids = {slurm_id for _, slurm_id, _ in submitted}
    assert len(slurm_ids) == len(submitted)
    logdir = (work / ".snakemake" / "slurm_logs").resolve()
    for _, slurm_id, log in submitted:
        log = Path(log)
        assert log.is_relative_to(logdir) and log.name == f"{slurm_id}.log", log
        text = log.read_text()  # written by slurmd: the job step ran inside the SLURM job
        assert "--executor slurm-jobstep" in text and "1 of 1 steps (100%) done" in text, text

    # and SLURM itself knows them, all completed
    run_id = re.search(r"SLURM run ID: (\S+)", output).group(1)
    assert squeue_states(run_id) == dict.fromkeys(slurm_ids, "COMPLETED")

    # the outputs are right: every setting, every run, within the paper's tolerance
    table = (work / TARGET).read_text()
    runs = pd.read_csv(work / "results" / "kfed" / "table1.csv")
    acc = runs[runs.metric == "accuracy"]
    targets = yaml.safe_load((REPO / "config" / "paper_targets.yaml").read_text())
    table1 = targets["kfed"]["table1"]
    for row in table1["rows"]:
        sel = acc[(acc.n_features == row["n_features"]) & (acc.n_clusters == row["n_clusters"])]
        assert len(sel) == settings["runs"], row
        # within max(2 printed std, the printed precision), float rounding allowed (see
        # test_workflow)
        bound = max(2 * row["std"], table1["printed_precision"]) + 1e-12
        assert abs(sel.value.mean() - row["value"]) <= bound, row
        assert f"| {row['n_features']} | {row['n_clusters']} |" in table, row

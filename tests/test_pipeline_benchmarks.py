import re

import pandas as pd
import pytest
import yaml

from fedclust.pipeline.benchmarks import (
    format_seconds,
    host_speed,
    measured_block,
    python_loop_seconds,
    read_benchmarks,
    render_measured,
    render_summary,
    replace_measured_block,
    summarize,
)

from .conftest import REPO

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write_benchmark(root, relative, seconds, rss, cpu):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t50.0\t{cpu}\n")


def test_jobs_summed_per_rule_with_their_peaks(tmp_path):
    write_benchmark(tmp_path, "lkm_real/localkmeans/real/mnist.tsv", 120.5, 900.0, 230.0)
    write_benchmark(tmp_path, "lkm_real/localkmeans/real/postures.tsv", 30.0, 1500.0, 55.0)
    write_benchmark(tmp_path, "figure/kfed/figure_fig1.tsv", 2.0, "-", 1.5)
    jobs = read_benchmarks(tmp_path)
    assert sorted(jobs["job"]) == ["kfed/figure_fig1", "localkmeans/real/mnist",
                                   "localkmeans/real/postures"]
    summary = summarize(jobs)
    assert summary["rule"].tolist() == ["lkm_real", "figure"]  # longest first
    real = summary.iloc[0]
    assert (real.jobs, real.total_seconds, real.longest_seconds) == (2, 150.5, 120.5)
    assert real.longest_job == "localkmeans/real/mnist"
    assert (real.cpu_seconds, real.peak_rss_mb) == (285.0, 1500.0)
    assert pd.isna(summary.iloc[1].peak_rss_mb)  # "-": not measured, not zero
    text = render_summary(summary, "quick")
    assert "3 jobs, 2.5 min of job time" in text and "1,500 MB" in text
    assert "| figure | 1 | 2.0 | 2.0 | kfed/figure_fig1 | 1.5 | n/a |" in text


def test_a_file_that_is_not_a_benchmark_is_named(tmp_path):
    (tmp_path / "gather").mkdir()
    (tmp_path / "gather" / "odd.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match=r"gather/odd.tsv: not a Snakemake benchmark file"):
        read_benchmarks(tmp_path)


def test_no_benchmarks_gives_an_empty_summary(tmp_path):
    summary = summarize(read_benchmarks(tmp_path))
    assert summary.empty and "total_seconds" in summary.columns


@pytest.mark.parametrize("seconds, text", [(15_233, "4 h 14 min"), (3_599.6, "1 h 0 min"),
                                           (750, "12 min 30 s"), (44.6, "45 s")])
def test_seconds_read_as_a_person_says_them(seconds, text):
    assert format_seconds(seconds) == text


def measured_sources():
    profiles = pd.DataFrame({"profile": ["paper", "quick"], "wall_minutes": [253.9, 11.4],
                             "commit": ["aaa", "bbb"], "date": ["d1", "d2"]})
    steps = pd.DataFrame({"step": ["ci total", "unit tests"], "seconds": [1700.0, 290.0],
                          "count": [None, 900], "unit": ["", "tests"], "commit": ["ccc", "ddd"],
                          "date": ["d3", "d4"],
                          "machine": ["AMD EPYC, 2 cores; host speed: a 10^7-step Python loop "
                                      "0.41 s, a 1000x1000 float64 product on one thread 48 ms",
                                      "AMD EPYC, 2 cores"]})
    return profiles, steps


def test_the_measured_table_names_each_times_commit_and_the_dry_runs_job_counts():
    profiles, steps = measured_sources()
    block = render_measured(profiles, steps, {"paper": 283, "quick": 203})
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [
        '| the edit-and-test loop, `python -m pytest -m "not reproduction"` | 4 min 50 s | '
        "900 tests | ddd, d4 | not recorded |",
        "| quick profile, `snakemake --cores 2 --configfile config/ci.yaml`, clean directory | "
        "11 min 24 s | 203 jobs (the dry run at this commit) | bbb, d2 | not recorded |",
        "| CI from start to end (`.ci/run`: install, SLURM start, tests) | 28 min 20 s |  | "
        "ccc, d3 | 0.41 s |",
        "| paper profile, `snakemake --cores 2`, clean directory | 4 h 14 min | "
        "283 jobs (the dry run at this commit) | aaa, d1 | not recorded |"]
    text = f"intro\n{block}\noutro"
    assert measured_block(text) == block
    assert replace_measured_block(text, "new") == "intro\nnew\noutro"
    with pytest.raises(ValueError, match="README.md has no measured table"):
        measured_block("intro only")


def test_the_host_speed_is_written_and_read_back_from_a_machine_text():
    text = host_speed(repeat=1)
    loop = python_loop_seconds(f"AMD EPYC, 2 cores, Python 3.11.7; {text}")
    assert loop is not None and 0 < loop < 60
    assert re.fullmatch(r"host speed: a 10\^7-step Python loop [0-9.]+ s, a 1000x1000 float64 "
                        r"product on one thread \d+ ms", text)
    assert python_loop_seconds("AMD EPYC, 2 cores, Python 3.11.7, numpy 2.4.6") is None
    assert python_loop_seconds(float("nan")) is None  # a CSV row without a machine


def test_the_readmes_measured_table_is_the_one_the_results_give():
    """The README's times are the committed measurements' (``benchmarks/results/``), never
    typed by hand; its job counts are checked against the dry run in test_workflow.py."""
    readme = (REPO / "README.md").read_text()
    block = measured_block(readme)
    jobs = {profile: int(count.replace(",", "")) for profile, count in
            re.findall(r"^\| (quick|paper) profile.*?\| ([\d,]+) jobs", block, re.M)}
    results = REPO / "benchmarks" / "results"
    steps = results / "steps.csv"
    assert block == render_measured(
        pd.read_csv(results / "profiles.csv"),
        pd.read_csv(steps) if steps.exists() else pd.DataFrame(
            columns=["step", "seconds", "count", "unit", "commit", "date"]), jobs)


@pytest.mark.parametrize("script, out", [("table2_cell", "table2_cell"),
                                         ("table2_cell", "table2_cell_a6ed2bf"),
                                         ("fedkmeans_sweep", "fedkmeans_sweep"),
                                         ("coreset_setting_run", "coreset_setting_run"),
                                         ("seeding_dtype", "seeding_dtype"),
                                         ("seeding_dtype", "seeding_float32_dots")])
def test_a_before_after_table_is_what_its_csv_and_command_give(monkeypatch, script, out):
    """The committed markdown of a before/after benchmark re-renders from its CSV and the
    command it prints (the machine line as printed)."""
    import importlib
    import shlex

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    module = importlib.import_module(script)
    markdown = (REPO / "benchmarks" / "results" / f"{out}.md").read_text()
    table = pd.read_csv(REPO / "benchmarks" / "results" / f"{out}.csv")
    argv = shlex.split(re.search(rf"Command: `python benchmarks/{script}\.py (.*?)`",
                                 markdown).group(1))
    argv += ["--out", out] if script == "table2_cell" else []
    argv += ["--run", str(table["run"].iloc[0])] if "run" in table else []
    argv += ["--repeat", str(table["repeat"].nunique())] if "repeat" in table else []
    machine_line = re.search(r"Machine: (.*?)[;,] one thread", markdown).group(1)
    args, pairs = module.parse(argv)
    assert [label for label, _ in pairs] == args.labels
    assert module.render(table, args, machine_line) == markdown


def test_a_code_changes_means_are_judged_against_the_old_runs_standard_error(tmp_path,
                                                                           monkeypatch):
    """benchmarks/code_change_means.py: per cell, the new mean within one standard error of
    the old one or not, from the two runs' job tables (coreset settings, Table 2 cells)."""
    import numpy as np

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import code_change_means

    rng = np.random.default_rng(0)
    ratios = 1.05 + 0.01 * rng.standard_normal(30)
    for side, shift in (("old", 0.0), ("new", 0.05)):
        folder = tmp_path / side / "results/coreset/kmeans/msd_mixture/n100/uniform"
        folder.mkdir(parents=True)
        rows = [{"graph": "grid", "algorithm": algorithm, "network": "graph",
                 "coreset_size": 1000, "run": run, "metric": "cost_ratio",
                 # COMBINE unchanged but one run; the distributed coreset moved by 5 SE
                 "value": ratios[run] + (shift if algorithm == "distributed" else
                                         shift * 0.01 * (run == 0))}
                for run in range(30) for algorithm in ("distributed", "combine")]
        for first in (0, 15):
            pd.DataFrame(rows[2 * first:2 * first + 30]).to_csv(
                folder / f"runs{first}-{first + 14}.csv", index=False)
        cell = tmp_path / side / "results/kfed/table2"
        cell.mkdir(parents=True)
        pd.DataFrame([{"run": run, "round": r, "metric": "test_accuracy",
                       "value": 0.5 + 0.4 * (r > 0) + 0.001 * run}
                      for run in range(2) for r in (0, 100)]).to_csv(
            cell / "n100_k1_kfed.csv", index=False)
    monkeypatch.setattr(code_change_means, "OUT", tmp_path / "out")
    code_change_means.main(["--old", str(tmp_path / "old"), "--new", str(tmp_path / "new"),
                            "--coreset", "n100/uniform", "--table2", "n100_k1_kfed",
                            "--change", "a change", "--out", "means"])
    table = pd.read_csv(tmp_path / "out" / "means.csv")
    within = dict(zip(table["algorithm"].fillna(table["cell"]), table["within_one_se"],
                      strict=True))
    assert within == {"combine": True, "distributed": False, "n100_k1_kfed": True}
    new = table.loc[table["cell"] == "n100_k1_kfed", "new_mean"].item()
    assert new == pytest.approx(0.9005)
    markdown = (tmp_path / "out" / "means.md").read_text()
    assert "2 of 3 cells within one standard error" in markdown
    assert "| coreset n100/uniform | grid, distributed (graph), t = 1000 |" in markdown


def test_a_before_after_benchmark_needs_a_label_per_tree(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import table2_cell

    with pytest.raises(SystemExit):
        table2_cell.parse(["--src", "a", "b", "--labels", "before"])
    assert "one label per --src tree (2 trees, 1 labels)" in capsys.readouterr().err


def test_job_overhead_is_the_job_time_outside_its_log(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import job_overhead

    write_benchmark(tmp_path / "results" / "benchmarks", "kfed_oracle/kfed/oracle/mnist_k2.tsv",
                    10.0, 300.0, 6.0)
    write_benchmark(tmp_path / "results" / "benchmarks", "gather/kfed/gather.tsv", 2.0, 90.0, 1.0)
    (tmp_path / ".snakemake" / "log").mkdir(parents=True)
    (tmp_path / ".snakemake" / "log" / "2026-11-29T100000.snakemake.log").write_text(
        "rule kfed_oracle:\n    input: data/mnist/features.h5\n"
        "    log: results/logs/kfed/oracle/mnist_k2.log\n    jobid: 3\n"
        "    benchmark: results/benchmarks/kfed_oracle/kfed/oracle/mnist_k2.tsv\n"
        "localrule gather:\n    benchmark: results/benchmarks/gather/kfed/gather.tsv\n")
    log = tmp_path / "results" / "logs" / "kfed" / "oracle" / "mnist_k2.log"
    log.parent.mkdir(parents=True)
    log.write_text("2026-11-29 10:00:01,250 INFO fedclust: rule kfed_oracle: 1 thread(s)\n"
                   "  a continuation line\n"
                   "2026-11-29 10:00:08,750 INFO fedclust: wrote 3 rows\n")
    table = job_overhead.job_table(tmp_path).set_index("job")
    assert table.loc["kfed/oracle/mnist_k2", "in_log"] == 7.5
    assert table.loc["kfed/oracle/mnist_k2", "outside"] == 2.5
    assert pd.isna(table.loc["kfed/gather", "in_log"])  # no log: not counted either way
    text = job_overhead.render(table.reset_index(), "a test run")
    assert "1 of 2 jobs have a timestamped log" in text
    assert "| kfed_oracle | 1 | 10.0 | 7.5 | 2.5 | 2.5 |" in text


def test_a_resumed_runs_segments_are_read_from_its_snakemake_logs(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import profiles

    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    # a run stopped after two jobs (its last event 10:40:05), a dry run that finished none,
    # and the resumed run
    (logs / "2026-11-29T103350.053773.snakemake.log").write_text(
        "Building DAG of jobs...\n[Sun Nov 29 10:33:56 2026]\nlocalrule run_config:\n"
        "[Sun Nov 29 10:34:09 2026]\nFinished jobid: 1 (Rule: run_config)\n"
        "[Sun Nov 29 10:40:05 2026]\nFinished jobid: 2 (Rule: fetch_mnist)\n")
    (logs / "2026-11-29T120000.000001.snakemake.log").write_text("Building DAG of jobs...\n")
    (logs / "2026-11-30T090000.000002.snakemake.log").write_text(
        "[Mon Nov 30 09:00:03 2026]\nFinished jobid: 5 (Rule: figure)\n"
        "[Mon Nov 30 09:30:00 2026]\nFinished jobid: 6 (Rule: all)\n")
    segments = profiles.log_segments(tmp_path)
    assert [s["jobs"] for s in segments] == [2, 2]
    assert [(s["end"] - s["start"]).total_seconds() for s in segments] == [375.0, 1800.0]
    note = profiles.segments_note(segments, "a617b9e")
    assert "In 2 segments from one clean directory at a617b9e" in note
    assert "2026-11-29 10:33:50-10:40:05 UTC (2 jobs); 2026-11-30 09:00:00-09:30:00" in note


def _gpu_module(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import gpu

    return gpu


def test_the_gpu_table_is_what_its_csvs_give(tmp_path, monkeypatch):
    gpu = _gpu_module(monkeypatch)
    results = REPO / "benchmarks" / "results"
    for name in ("gpu.csv", "gpu_table2.csv", "gpu_cpu_reference.csv"):
        (tmp_path / name).write_bytes((results / name).read_bytes())
    gpu.main(["--render", str(tmp_path)])
    assert (tmp_path / "gpu.md").read_text() == (results / "gpu.md").read_text()


def test_the_gpu_comparison_keeps_its_cpu_run_after_a_republication(tmp_path, monkeypatch):
    """A report published after the GPU's call (other accuracies, commit and machine) leaves
    a table whose CPU run was kept unchanged; without that run kept it would change."""
    gpu = _gpu_module(monkeypatch)
    results = REPO / "benchmarks" / "results"
    published = tmp_path / "paper-profile"
    published.mkdir()
    report = pd.read_csv(gpu.PUBLISHED)
    table2 = report["key"] == "kfed.table2.values"
    report.loc[table2, "reproduced"] = report.loc[table2, "reproduced"] - 0.05
    report.to_csv(published / "reproduction.csv", index=False)
    (published / "rules.md").write_text(gpu.PUBLISHED.with_name("rules.md").read_text())
    (published / "provenance.yaml").write_text(
        yaml.safe_dump({"commit": "0000000", "machine": "Another CPU; fast"}))
    monkeypatch.setattr(gpu, "PUBLISHED", published / "reproduction.csv")
    kept, lost = tmp_path / "kept", tmp_path / "lost"
    for folder, names in ((kept, ("gpu.csv", "gpu_table2.csv", "gpu_cpu_reference.csv")),
                          (lost, ("gpu.csv", "gpu_table2.csv"))):
        folder.mkdir()
        for name in names:
            (folder / name).write_bytes((results / name).read_bytes())
        gpu.main(["--render", str(folder)])
    assert (kept / "gpu.md").read_text() == (results / "gpu.md").read_text()
    text = (lost / "gpu.md").read_text()
    assert "computed at 0000000" in text and "0 of 12 cells within the band" in text


def test_a_gpu_round_not_measured_says_so_and_is_not_projected(tmp_path, monkeypatch):
    gpu = _gpu_module(monkeypatch)
    timings = pd.read_csv(REPO / "benchmarks" / "results" / "gpu.csv")
    cut = (timings["part"] == "table2_rounds") & (timings["device"] == "cuda")
    timings[~cut].to_csv(tmp_path / "gpu.csv", index=False)
    gpu.main(["--render", str(tmp_path)])
    text = (tmp_path / "gpu.md").read_text()
    assert "| 24 | 1.6896 | not measured |  |" in text
    assert "Projected" not in text and "GPU reruns with the same seed: not run" in text


def test_gpu_accuracies_off_by_more_than_the_runs_spread_fall_outside(monkeypatch):
    gpu = _gpu_module(monkeypatch)
    results = REPO / "benchmarks" / "results"
    accuracy, cpu = pd.read_csv(results / "gpu_table2.csv"), gpu.cpu_reference(results)
    assert gpu.compare(accuracy, cpu)["within"].all()
    shifted = gpu.compare(accuracy.assign(test_accuracy=accuracy["test_accuracy"] - 0.01), cpu)
    assert len(shifted) == 12 and not shifted["within"].any()

"""Wall time and peak memory of every job of a run, from Snakemake's ``benchmark:`` files.

Every rule that does work writes ``results/benchmarks/<rule>/<its log path>.tsv`` (Snakemake's
benchmark format: seconds, peak resident memory in MB, CPU seconds, ...). After the rest of the
run, one rule summarizes them per rule into :data:`SUMMARY_CSV` and a readable
:data:`SUMMARY_MD` that the report shows; ``benchmarks/profiles.py`` collects the summaries of
whole profiles next to their measured wall times.

The summary reads every file under :data:`BENCHMARK_DIR`: a results directory reused across
profiles also holds the jobs of the earlier ones (time a profile in a clean directory, as
``benchmarks/profiles.py`` does).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pandas as pd

__all__ = ["BENCHMARK_DIR", "SUMMARY_CSV", "SUMMARY_MD", "read_benchmarks", "summarize",
           "render_summary", "format_mb", "format_seconds", "MEASURED_START", "MEASURED_END",
           "render_measured", "measured_block", "replace_measured_block", "host_speed",
           "python_loop_seconds"]

BENCHMARK_DIR = "results/benchmarks"
SUMMARY_CSV = f"{BENCHMARK_DIR}/summary.csv"
SUMMARY_MD = f"{BENCHMARK_DIR}/summary.md"

# Snakemake's columns, and what this module calls them
_COLUMNS = {"s": "seconds", "max_rss": "peak_rss_mb", "cpu_time": "cpu_seconds",
            "mean_load": "mean_load"}


def read_benchmarks(root) -> pd.DataFrame:
    """One row per job: ``rule``, ``job`` (the benchmark file below the rule's directory),
    ``seconds``, ``peak_rss_mb``, ``cpu_seconds``, ``mean_load``.

    Snakemake writes ``-`` or 0 where it could not measure (a job of a few milliseconds has
    no memory sample): those read as missing, not as zero.
    """
    root = Path(root)
    rows = []
    for path in sorted(root.glob("*/**/*.tsv")):
        table = pd.read_csv(path, sep="\t")
        missing = set(_COLUMNS) - set(table.columns)
        if missing:
            raise ValueError(f"{path}: not a Snakemake benchmark file (no {sorted(missing)} "
                             f"column)")
        relative = path.relative_to(root)
        for record in table.to_dict("records"):  # one row per repeat of the job
            row = {"rule": relative.parts[0],
                   "job": str(Path(*relative.parts[1:]).with_suffix(""))}
            for column, name in _COLUMNS.items():
                row[name] = pd.to_numeric(record[column], errors="coerce")
            rows.append(row)
    table = pd.DataFrame(rows, columns=["rule", "job", *_COLUMNS.values()])
    table.loc[table["peak_rss_mb"] <= 0, "peak_rss_mb"] = float("nan")
    return table


def summarize(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per rule: jobs, total and longest seconds (and which job), CPU seconds, peak memory;
    the rules that took longest first."""
    if jobs.empty:
        return pd.DataFrame(columns=["rule", "jobs", "total_seconds", "longest_seconds",
                                     "longest_job", "cpu_seconds", "peak_rss_mb"])
    longest = jobs.loc[jobs.groupby("rule")["seconds"].idxmax(), ["rule", "job"]]
    summary = jobs.groupby("rule").agg(
        jobs=("job", "size"), total_seconds=("seconds", "sum"),
        longest_seconds=("seconds", "max"), cpu_seconds=("cpu_seconds", "sum"),
        peak_rss_mb=("peak_rss_mb", "max")).reset_index()
    summary = summary.merge(longest.rename(columns={"job": "longest_job"}), on="rule")
    return summary.sort_values("total_seconds", ascending=False, ignore_index=True)[
        ["rule", "jobs", "total_seconds", "longest_seconds", "longest_job", "cpu_seconds",
         "peak_rss_mb"]]


def format_mb(value) -> str:
    """Megabytes with thousands separators, ``n/a`` where not measured."""
    return "n/a" if pd.isna(value) else f"{value:,.0f}"


def render_summary(summary: pd.DataFrame, profile: str) -> str:
    """The per-rule summary as Markdown, with the run's totals on top."""
    total = summary["total_seconds"].sum()
    lines = [f"# Time and memory per rule ({profile} profile)", "",
             f"{int(summary['jobs'].sum())} jobs, {total / 60:.1f} min of job time in all "
             f"(summed over jobs: with N cores the run's wall time is shorter), largest peak "
             f"memory of one job {format_mb(summary['peak_rss_mb'].max())} MB. Measured by "
             f"Snakemake's `benchmark:` files under `{BENCHMARK_DIR}/`.", "",
             "| rule | jobs | total (s) | longest job (s) | longest job | CPU (s) | "
             "peak RSS (MB) |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.rule} | {r.jobs} | {r.total_seconds:.1f} | {r.longest_seconds:.1f} | "
              f"{r.longest_job} | {r.cpu_seconds:.1f} | {format_mb(r.peak_rss_mb)} |"
              for r in summary.itertuples()]
    return "\n".join(lines) + "\n"


#: The markers around the README's table of measured times and job counts; everything
#: between them is written by ``python benchmarks/profiles.py --readme``.
MEASURED_START = ("<!-- measured: written by `python benchmarks/profiles.py --readme` from "
                  "benchmarks/results/; do not edit -->")
MEASURED_END = "<!-- /measured -->"

#: What each row of the measured table is, in its order: ``(key, what was timed)``; a key
#: is a profile of ``profiles.csv`` or a step of ``steps.csv``.
_MEASURED_ROWS = [
    ("install", "install from `requirements.lock` and `requirements-flower.lock` into a "
                "fresh venv (CI)"),
    ("unit tests", 'the edit-and-test loop, `python -m pytest -m "not reproduction"`'),
    ("quick", "quick profile, `snakemake --cores 2 --configfile config/ci.yaml`, clean directory"),
    ("ci tests", "the whole suite as CI runs it (the quick profile included)"),
    ("ci total", "CI from start to end (`.ci/run`: install, SLURM start, tests)"),
    ("paper", "paper profile, `snakemake --cores 2`, clean directory"),
]


def host_speed(repeat: int = 5) -> str:
    """Two fixed workloads timed on this host now (best of ``repeat``), for the ``machine``
    text beside a measurement: the interpreter (a 10^7-step Python loop) and BLAS (a
    1000 x 1000 float64 product on one thread). Hosts under one CPU name ran the same code
    1.9x apart between sessions (the authors' k-FED: 6.87 s on 2026-11-26, 13.2 s on
    2026-11-27), so an absolute time is comparable across sittings only beside these; read the
    loop's back with :func:`python_loop_seconds`."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    def best(work) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        return min(times)

    def loop() -> None:
        total = 0
        for i in range(10**7):
            total += i

    a = np.random.default_rng(0).random((1000, 1000))
    with threadpool_limits(1):
        product = best(lambda: a @ a)
    return (f"host speed: a 10^7-step Python loop {best(loop):.2f} s, a 1000x1000 float64 "
            f"product on one thread {product * 1e3:.0f} ms")


_PYTHON_LOOP = re.compile(r"host speed: a 10\^7-step Python loop ([0-9.]+) s")


def python_loop_seconds(machine) -> float | None:
    """The Python loop's seconds in a ``machine`` text that carries :func:`host_speed`'s, or
    None (measurements recorded before 2026-11-27 have none)."""
    match = _PYTHON_LOOP.search(machine) if isinstance(machine, str) else None
    return float(match.group(1)) if match else None


def format_seconds(seconds: float) -> str:
    """``4 h 14 min`` (to the nearest minute from an hour on), ``12 min 30 s`` or ``45 s``."""
    seconds = int(round(float(seconds)))
    if seconds >= 3600:
        hours, minutes = divmod(int(round(seconds / 60)), 60)
        return f"{hours} h {minutes} min"
    minutes, secs = divmod(seconds, 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def render_measured(profiles: pd.DataFrame, steps: pd.DataFrame, jobs: dict) -> str:
    """The README's table of measured times and job counts.

    Parameters
    ----------
    profiles : DataFrame
        ``benchmarks/results/profiles.csv`` (wall minutes, commit, date of each profile run).
    steps : DataFrame
        ``benchmarks/results/steps.csv`` (``step``, ``seconds``, ``count``, ``unit``,
        ``commit``, ``date``, ``machine``): the install, the tests, CI. The host column is
        the Python loop's time in each row's ``machine`` (:func:`host_speed`), where it has
        one.
    jobs : dict
        ``{profile: jobs}``, the dry run's job count of each profile at the current commit.
    """
    by_profile = profiles.set_index("profile")
    by_step = steps.set_index("step")
    lines = [MEASURED_START, "",
             "| what | wall time | size | commit, date | host: a 10^7-step Python loop |",
             "|---|---|---|---|---|"]
    for key, what in _MEASURED_ROWS:
        if key in by_profile.index:
            row = by_profile.loc[key]
            wall = format_seconds(row["wall_minutes"] * 60)
            size = f"{jobs[key]:,} jobs (the dry run at this commit)"
        elif key in by_step.index:
            row = by_step.loc[key]
            wall = format_seconds(row["seconds"])
            size = "" if pd.isna(row["count"]) else f"{int(row['count']):,} {row['unit']}"
        else:
            continue
        loop = python_loop_seconds(row.get("machine"))
        host = "not recorded" if loop is None else f"{loop:.2f} s"
        lines.append(f"| {what} | {wall} | {size} | {row['commit']}, {row['date']} | {host} |")
    lines += ["", MEASURED_END]
    return "\n".join(lines)


def measured_block(text: str) -> str:
    """The measured table in ``text`` (markers included); ValueError naming what is missing."""
    start, end = text.find(MEASURED_START), text.find(MEASURED_END)
    if start < 0 or end < start:
        raise ValueError("README.md has no measured table (its markers "
                         f"{MEASURED_START!r} ... {MEASURED_END!r} are missing)")
    return text[start:end + len(MEASURED_END)]


def replace_measured_block(text: str, block: str) -> str:
    """``text`` with its measured table replaced by ``block``."""
    return text.replace(measured_block(text), block)

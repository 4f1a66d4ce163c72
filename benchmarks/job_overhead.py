"""Where a finished run's job time goes: each job's wall time (its Snakemake benchmark) against
the span of its own log, from the first timestamped line (written once the script's imports
are done) to the last (its outputs written); the rest of the job is the process's start, its
imports and its exit, paid once per job whatever the job computes.

    python benchmarks/job_overhead.py --run /tmp/quick-run --out job_overhead_quick

Reads the run's ``.snakemake/log/*.snakemake.log`` (which pairs every job's ``log:`` with its
``benchmark:``), ``results/benchmarks/`` and ``results/logs/``; writes
``benchmarks/results/<out>.{csv,md}``.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from fedclust.pipeline.benchmarks import read_benchmarks  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})", re.M)


def log_of_benchmark(run: Path) -> dict[str, str]:
    """``{benchmark path: log path}`` from the run's Snakemake logs (relative to ``run``)."""
    pairs = {}
    for main_log in sorted((run / ".snakemake" / "log").glob("*.snakemake.log")):
        log = None
        for line in main_log.read_text().splitlines():
            line = line.strip()
            if line.startswith("log: "):
                log = line[len("log: "):].split(",")[0].strip()
            elif line.startswith("benchmark: ") and log is not None:
                pairs[line[len("benchmark: "):].strip()] = log
                log = None
            elif line.startswith(("rule ", "localrule ")):
                log = None
    return pairs


def log_span(path: Path) -> float | None:
    """Seconds from the first to the last timestamped line of a job's log (None: no log, or
    fewer than one stamp)."""
    if not path.exists():
        return None
    stamps = [datetime.strptime(s, "%Y-%m-%d %H:%M:%S,%f")
              for s in STAMP.findall(path.read_text(errors="replace"))]
    return (stamps[-1] - stamps[0]).total_seconds() if stamps else None


def job_table(run: Path) -> pd.DataFrame:
    """One row per job: rule, job, wall seconds, seconds inside its log, outside them."""
    jobs = read_benchmarks(run / "results" / "benchmarks")
    logs = log_of_benchmark(run)
    inside = []
    for job in jobs.itertuples():
        log = logs.get(f"results/benchmarks/{job.rule}/{job.job}.tsv")
        inside.append(None if log is None else log_span(run / log))
    table = jobs[["rule", "job", "seconds"]].assign(in_log=inside)
    return table.assign(outside=table.seconds - table.in_log)


def render(table: pd.DataFrame, run_label: str) -> str:
    matched = table.dropna(subset=["in_log"])
    per_rule = (matched.groupby("rule")
                .agg(jobs=("job", "size"), wall=("seconds", "sum"), in_log=("in_log", "sum"),
                     outside=("outside", "sum"), outside_median=("outside", "median"))
                .sort_values("outside", ascending=False))
    lines = ["# Job time inside and outside the jobs' own work", "",
             f"Run: {run_label}. {len(matched)} of {len(table)} jobs have a timestamped log: "
             f"{matched.seconds.sum() / 60:.1f} of {table.seconds.sum() / 60:.1f} job-min. Of "
             f"those, **{matched.outside.sum() / 60:.1f} job-min "
             f"({matched.outside.sum() / matched.seconds.sum():.0%}) lie outside the span of "
             f"their logs**: the process's start, its imports (numpy, pandas, scikit-learn and "
             f"scipy.stats, numba, torch, matplotlib) and its exit. Command: `python "
             f"benchmarks/job_overhead.py --run <run>`.", "",
             "| rule | jobs | job time (s) | in the log (s) | outside it (s) | outside, median "
             "job (s) |", "|---|---|---|---|---|---|"]
    lines += [f"| {rule} | {int(r.jobs)} | {r.wall:.1f} | {r.in_log:.1f} | {r.outside:.1f} | "
              f"{r.outside_median:.1f} |" for rule, r in per_rule.iterrows()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a finished run's directory")
    parser.add_argument("--label", help="what the run was (commit, profile, host)")
    parser.add_argument("--out", default="job_overhead")
    args = parser.parse_args(argv)
    if not (args.run / "results" / "benchmarks").is_dir():
        parser.error(f"--run {args.run}: no results/benchmarks/ (not a finished run)")
    table = job_table(args.run)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / f"{args.out}.csv", index=False)
    (OUT / f"{args.out}.md").write_text(render(table, args.label or str(args.run)))
    print((OUT / f"{args.out}.md").read_text())


if __name__ == "__main__":
    main()

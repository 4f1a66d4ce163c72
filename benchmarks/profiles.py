"""Time a whole profile of the pipeline: wall time, job time and peak memory per rule.

Runs ``snakemake`` for one profile in a clean scratch copy of the workflow (so that no earlier
result is reused and no earlier job's benchmark file is counted), measures its wall time, and
records it with the run's per-rule summary (``results/benchmarks/summary.csv``, written by the
pipeline itself from Snakemake's ``benchmark:`` files) and its reproduction counts:

    python benchmarks/profiles.py quick --data-mirror ../shared/data       # ~5 min on 2 cores
    python benchmarks/profiles.py paper --data-mirror ../shared/data       # about an hour

Writes ``benchmarks/results/profile_<name>.md`` and updates one row of
``benchmarks/results/profiles.csv`` and ``profiles.md``. ``--publish docs/paper-profile``
also publishes the run's report, figures and time per rule there
(:func:`fedclust.pipeline.publish.publish_report`). A run made elsewhere (e.g. from a clone, in
the background) is recorded and published afterwards with ``--finished-run DIR
--wall-seconds S --commit C --date YYYY-MM-DD``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO / "src"))
from fedclust.pipeline.benchmarks import SUMMARY_CSV, format_mb, render_summary  # noqa: E402
from fedclust.pipeline.publish import publish_report  # noqa: E402


def config_file(profile: str) -> Path:
    """The config file whose ``profile:`` is ``profile`` (the profile is declared there)."""
    for path in sorted((REPO / "config").glob("*.yaml")):
        declared = yaml.safe_load(path.read_text())
        if path.name != "schema.yaml" and declared.get("profile") == profile:
            return path
    raise SystemExit(f"no config/*.yaml declares profile: {profile}")


def run_profile(profile: str, cores: int, data_mirror: Path, workdir: Path) -> float:
    """Run the profile in ``workdir`` (a copy of the Snakefile, config/, workflow/, src/,
    environment.yml and the profiles link: edits to the repository during the run do not reach
    it; without the compiled-kernel cache, as in a fresh clone); return its wall time in
    seconds."""
    for name in ("config", "workflow", "src"):
        shutil.copytree(REPO / name, workdir / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(REPO / name, workdir)
    (workdir / "profiles").symlink_to(os.readlink(REPO / "profiles"))
    command = ["snakemake", "--cores", str(cores), "--configfile",
               str(config_file(profile).relative_to(REPO)), "--config",
               f"data_mirror={data_mirror.resolve()}"]
    print("running", " ".join(command), "in", workdir, flush=True)
    start = time.perf_counter()
    subprocess.run(command, cwd=workdir, check=True, env={**os.environ, "MPLBACKEND": "Agg"})
    return time.perf_counter() - start


def status_counts(workdir: Path) -> str:
    claims = pd.read_csv(workdir / "results" / "reproduction.csv")
    return ", ".join(f"{n} {status}" for status, n in claims["status"].value_counts().items())


def current_commit() -> str:
    """The repository's commit, marked when the code the run copies has uncommitted changes
    (read before the run: the repository may move on while it runs)."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "src", "workflow", "config"],
                           cwd=REPO, capture_output=True, text=True)
    return commit + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def record(profile: str, cores: int, wall: float, workdir: Path, *, commit: str,
           day: str, note: str | None = None) -> None:
    summary = pd.read_csv(workdir / SUMMARY_CSV)
    row = {"profile": profile, "cores": cores, "wall_minutes": round(wall / 60, 1),
           "jobs": int(summary["jobs"].sum()),
           "job_minutes": round(summary["total_seconds"].sum() / 60, 1),
           "peak_rss_mb": summary["peak_rss_mb"].max(),
           "slowest_rule": summary.iloc[0]["rule"] if len(summary) else "none",
           "claims": status_counts(workdir),
           "commit": commit, "date": day, "machine": machine()}
    OUT.mkdir(exist_ok=True)
    header = (f"Wall time {wall / 60:.1f} min with `--cores {cores}` "
              f"(`python benchmarks/profiles.py {profile}`), commit {commit}, {row['date']}. "
              f"Machine: {row['machine']}. Reproduction: {row['claims']}."
              + (f" {note}" if note else "") + "\n\n")
    (OUT / f"profile_{profile}.md").write_text(
        render_summary(summary, profile).replace("\n\n", "\n\n" + header, 1))
    table_path = OUT / "profiles.csv"
    table = pd.read_csv(table_path) if table_path.exists() else pd.DataFrame(columns=list(row))
    table = pd.concat([table[table["profile"] != profile], pd.DataFrame([row])],
                      ignore_index=True).sort_values("profile")
    table.to_csv(table_path, index=False)
    lines = ["# Profiles: wall time and peak memory", "",
             "Each profile run end to end in a clean directory by `python benchmarks/profiles.py "
             "<profile>`; per-rule tables in `profile_<profile>.md`.", "",
             "| profile | cores | wall (min) | jobs | job time (min) | peak RSS of a job (MB) | "
             "slowest rule | reproduction | commit | date | machine |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r.profile} | {r.cores} | {r.wall_minutes} | {r.jobs} | {r.job_minutes} | "
              f"{format_mb(r.peak_rss_mb)} | {r.slowest_rule} | {r.claims} | {r.commit} | "
              f"{r.date} | {r.machine} |" for r in table.itertuples()]
    (OUT / "profiles.md").write_text("\n".join(lines) + "\n")
    print((OUT / "profiles.md").read_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", help="a profile declared in config/*.yaml (quick, paper)")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--data-mirror", type=Path,
                        help="offline data mirror (e.g. ../shared/data); needed to run")
    parser.add_argument("--workdir", type=Path,
                        help="where to run (default: a new temporary directory, kept)")
    parser.add_argument("--publish", type=Path,
                        help="also publish the run's report here (e.g. docs/paper-profile)")
    parser.add_argument("--finished-run", type=Path,
                        help="record (and publish) a run that finished in this directory "
                             "instead of running one; give --wall-seconds, --commit, --date")
    parser.add_argument("--wall-seconds", type=float)
    parser.add_argument("--commit")
    parser.add_argument("--date")
    parser.add_argument("--note", help="how a --finished-run was made, when not by this script "
                        "in one go (printed at the top of the published report)")
    args = parser.parse_args(argv)
    if args.finished_run:
        missing = [f"--{name.replace('_', '-')}" for name in ("wall_seconds", "commit", "date")
                   if getattr(args, name) is None]
        if missing:
            parser.error(f"--finished-run needs {', '.join(missing)}")
        workdir, wall, commit, day = (args.finished_run, args.wall_seconds, args.commit,
                                      args.date)
    else:
        if args.data_mirror is None:
            parser.error("--data-mirror is needed to run a profile")
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix=f"fedclust-{args.profile}-"))
        commit, day = current_commit(), date.today().isoformat()
        wall = run_profile(args.profile, args.cores, args.data_mirror, workdir)
    record(args.profile, args.cores, wall, workdir, commit=commit, day=day, note=args.note)
    if args.publish:
        publish_report(workdir, args.publish, profile=args.profile, commit=commit, date=day,
                       machine=machine(), cores=args.cores, wall_seconds=wall, note=args.note)
        print("published", args.publish)


if __name__ == "__main__":
    main()

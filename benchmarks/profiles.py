"""Time a whole profile of the pipeline: wall time, job time and peak memory per rule.

Runs ``snakemake`` for one profile in a clean scratch copy of the workflow (so that no earlier
result is reused and no earlier job's benchmark file is counted), measures its wall time, and
records it with the run's per-rule summary (``results/benchmarks/summary.csv``, written by the
pipeline itself from Snakemake's ``benchmark:`` files) and its reproduction counts:

    python benchmarks/profiles.py quick --data-mirror ../shared/data       # ~5 min on 2 cores
    python benchmarks/profiles.py paper --data-mirror ../shared/data       # about an hour

Writes ``benchmarks/results/profile_<name>.md`` and updates one row of
``benchmarks/results/profiles.csv`` and ``profiles.md``.

The README's table of measured times and job counts is written from these files by the same
script, so no number in it is typed by hand:

    python benchmarks/profiles.py tests                  # times the unit tests (~5 min)
    python benchmarks/profiles.py --ci-log ci.log --commit C --date YYYY-MM-DD   # a CI run
    python benchmarks/profiles.py --readme               # job counts by dry run, README table

(every recording also rewrites the README's table; ``tests/test_workflow.py`` fails when
its job counts are not the dry run's at the current commit). ``--publish docs/paper-profile``
also publishes the run's report, figures and time per rule there
(:func:`fedclust.pipeline.publish.publish_report`); ``--publish docs/paper-profile --stale
REASON`` marks that report stale on its first screen until the next run replaces it. A run
made elsewhere (e.g. from a clone, in the background) is recorded and published afterwards
with ``--finished-run DIR --wall-seconds S --commit C --date YYYY-MM-DD``. A run stopped
part-way (its machine went away) is finished in the same directory with ``--resume DIR
--commit C --date YYYY-MM-DD``: Snakemake reruns what was incomplete and the wall time is the
sum of the segments, each read from its Snakemake log (:func:`log_segments`).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO / "src"))
from fedclust.pipeline import workdir as workdir_module  # noqa: E402
from fedclust.pipeline.benchmarks import (  # noqa: E402
    SUMMARY_CSV,
    format_mb,
    render_measured,
    render_summary,
    replace_measured_block,
)
from fedclust.pipeline.publish import mark_stale, publish_report  # noqa: E402


def config_file(profile: str) -> Path:
    """The config file whose ``profile:`` is ``profile`` (the profile is declared there)."""
    for path in sorted((REPO / "config").glob("*.yaml")):
        declared = yaml.safe_load(path.read_text())
        if path.name != "schema.yaml" and declared.get("profile") == profile:
            return path
    raise SystemExit(f"no config/*.yaml declares profile: {profile}")


STEPS_CSV = OUT / "steps.csv"


def copy_workflow(workdir: Path, *, kernels: bool = True) -> None:
    """The workflow in ``workdir`` as a new clone has it after the README's set-up
    (:func:`fedclust.pipeline.workdir.copy_workflow`): with ``kernels``, compiled there by
    the set-up's last command, ``python -m fedclust.compile``, before the clock starts, so
    that the profile times the main job and not the install. Never the checkout's own
    kernels: a cache that many processes filled can differ from a fresh one in its last bits
    (``benchmarks/cache_bits.py``), and a profile records what a clone computes."""
    workdir_module.copy_workflow(REPO, workdir, kernels=False)
    if kernels:
        workdir_module.compile_in(workdir)


def dry_run(profile: str, extra=()) -> str:
    """What ``snakemake -n`` prints for ``profile`` (and ``extra`` arguments) in a clean copy
    of the workflow: every job a run from a clean directory has."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        copy_workflow(workdir, kernels=False)  # a dry run runs no kernel
        result = subprocess.run(
            ["snakemake", "-n", "--cores", "2", "--configfile",
             str(config_file(profile).relative_to(REPO)), *extra],
            cwd=workdir, capture_output=True, text=True, check=True)
    return result.stdout


def dry_run_jobs(profile: str) -> int:
    """The number of jobs a run of ``profile`` from a clean directory has (the dry run's
    ``total``, data fetched from the internet: as many fetch jobs as from a mirror)."""
    return dry_run_total(dry_run(profile))


def dry_run_total(stdout: str) -> int:
    """The ``total`` of a dry run's job stats."""
    match = re.search(r"^total\s+(\d+)\s*$", stdout, re.M)
    if match is None:
        raise SystemExit("the dry run printed no job total:\n" + stdout[-2000:])
    return int(match.group(1))


def run_profile(profile: str, cores: int, data_mirror: Path, workdir: Path) -> float:
    """Run the profile in ``workdir`` (a fresh copy of the workflow, :func:`copy_workflow`);
    return its wall time in seconds."""
    copy_workflow(workdir)
    command = ["snakemake", "--cores", str(cores), "--configfile",
               str(config_file(profile).relative_to(REPO)), "--config",
               f"data_mirror={data_mirror.resolve()}"]
    print("running", " ".join(command), "in", workdir, flush=True)
    start = time.perf_counter()
    subprocess.run(command, cwd=workdir, check=True, env={**os.environ, "MPLBACKEND": "Agg"})
    return time.perf_counter() - start


_LOG_NAME = re.compile(r"^(\d{4}-\d\d-\d\dT\d{6})\.\d+\.snakemake\.log$")
_LOG_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.M)


def log_segments(workdir: Path) -> list[dict]:
    """The Snakemake invocations that ran jobs in ``workdir``, oldest first: ``start`` (the
    log's name), ``end`` (the last time stamp the log holds: the run's end, or for a run that
    was stopped, its last job event), ``jobs`` (the jobs it finished)."""
    segments = []
    for log in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log")):
        name = _LOG_NAME.match(log.name)
        text = log.read_text(errors="replace")
        jobs = len(re.findall(r"^Finished jobid: ", text, re.M))
        if name is None or not jobs:
            continue
        start = datetime.strptime(name.group(1), "%Y-%m-%dT%H%M%S")
        stamps = [datetime.strptime(" ".join(t.split()), "%a %b %d %H:%M:%S %Y")
                  for t in _LOG_STAMP.findall(text)]
        segments.append({"start": start, "end": max(stamps + [start]), "jobs": jobs})
    return segments


def segments_note(segments: list[dict], commit: str) -> str:
    """How a run made in several segments was made, for the report's first screen."""
    parts = [f"{s['start']:%Y-%m-%d %H:%M:%S}-{s['end']:%H:%M:%S} UTC ({s['jobs']} jobs)"
             for s in segments]
    return (f"In {len(segments)} segments from one clean directory at {commit} (each later "
            f"one resumed by Snakemake from the finished outputs with --rerun-incomplete): "
            f"{'; '.join(parts)}. The wall time is the segments' sum, a stopped segment "
            f"counted to its last logged job event (its jobs in flight were lost and ran "
            f"again).")


def resume_profile(profile: str, cores: int, data_mirror: Path, workdir: Path) -> float:
    """Finish a stopped run of ``profile`` in ``workdir``; return this segment's seconds."""
    if not (workdir / ".snakemake" / "log").is_dir():
        raise SystemExit(f"--resume {workdir}: no Snakemake run there to resume")
    command = ["snakemake", "--cores", str(cores), "--configfile",
               str(config_file(profile).relative_to(REPO)), "--config",
               f"data_mirror={data_mirror.resolve()}"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    subprocess.run(command[:1] + ["--unlock"] + command[3:5], cwd=workdir, check=True, env=env)
    print("resuming", " ".join(command), "in", workdir, flush=True)
    start = time.perf_counter()
    subprocess.run(command + ["--rerun-incomplete"], cwd=workdir, check=True, env=env)
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


def record_step(step: str, seconds: float, count, unit: str, *, commit: str, day: str,
                host: str | None = None) -> None:
    """One row of :data:`STEPS_CSV` (the install, the tests, CI), replacing the step's last;
    ``host`` is :func:`machine`'s text (measured now if not given)."""
    row = {"step": step, "seconds": round(float(seconds), 1), "count": count, "unit": unit,
           "commit": commit, "date": day, "machine": host or machine()}
    table = pd.read_csv(STEPS_CSV) if STEPS_CSV.exists() else pd.DataFrame(columns=list(row))
    table = pd.concat([table[table["step"] != step], pd.DataFrame([row])], ignore_index=True)
    table.sort_values("step").to_csv(STEPS_CSV, index=False)


def time_unit_tests(commit: str, day: str) -> None:
    """Time the edit-and-test loop as the README gives it, in the repository."""
    command = [sys.executable, "-m", "pytest", "-m", "not reproduction", "-q",
               "-p", "no:cacheprovider"]
    print("running", " ".join(command), flush=True)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    seconds = time.perf_counter() - start
    print(result.stdout[-1500:])
    if result.returncode != 0:
        raise SystemExit("the unit tests failed: nothing recorded")
    record_step("unit tests", seconds, _passed(result.stdout), "tests", commit=commit, day=day)


def _passed(output: str) -> int:
    match = re.search(r"(\d+) passed", output)
    if match is None:
        raise SystemExit("no pytest summary ('N passed') in the output")
    return int(match.group(1))


def record_ci_log(path: Path, commit: str, day: str) -> None:
    """The install, test and end-to-end times of a CI run from its log (``.ci/run``'s
    ``installed in``, ``tests finished in`` and ``CI finished in`` lines)."""
    log = path.read_text()
    found = {}
    for step, pattern in (("install", r"== installed in (\d+) s"),
                          ("ci tests", r"== tests finished in (\d+) s"),
                          ("ci total", r"== CI finished in (\d+) s")):
        match = re.search(pattern, log)
        if match is None:
            raise SystemExit(f"{path}: no line matching {pattern!r}: not a finished CI log")
        found[step] = int(match.group(1))
    # what CI installs: the base lock and the Flower extra's (README, ci:install), each
    # package once (the extra's lock pins a base package again with the extras it asks for)
    packages = len({re.sub(r"[-_.]+", "-", re.split(r"[\[=]", line, maxsplit=1)[0].lower())
                    for lock in ("requirements.lock", "requirements-flower.lock")
                    for line in (REPO / lock).read_text().splitlines()
                    if line and not line.startswith("#")})
    host = machine()  # one measurement of the host for the run's three rows
    record_step("install", found["install"], packages, "packages", commit=commit, day=day,
                host=host)
    record_step("ci tests", found["ci tests"], _passed(log), "tests", commit=commit, day=day,
                host=host)
    record_step("ci total", found["ci total"], None, "", commit=commit, day=day, host=host)


def write_readme_table() -> None:
    """Rewrite the README's measured table from profiles.csv and steps.csv, with the job
    counts of both profiles' dry runs at the current commit."""
    profiles = pd.read_csv(OUT / "profiles.csv")
    steps = pd.read_csv(STEPS_CSV) if STEPS_CSV.exists() else pd.DataFrame(
        columns=["step", "seconds", "count", "unit", "commit", "date", "machine"])
    jobs = {profile: dry_run_jobs(profile) for profile in profiles["profile"]}
    readme = REPO / "README.md"
    block = render_measured(profiles, steps, jobs)
    readme.write_text(replace_measured_block(readme.read_text(), block))
    print(block)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", nargs="?",
                        help="a profile declared in config/*.yaml (quick, paper), or `tests` "
                             "(time the unit tests)")
    parser.add_argument("--readme", action="store_true",
                        help="only rewrite the README's measured table (dry runs for the job "
                             "counts)")
    parser.add_argument("--ci-log", type=Path,
                        help="record a CI run's times from its log; give --commit, --date")
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
    parser.add_argument("--resume", type=Path, metavar="DIR",
                        help="finish a stopped run of the profile in DIR and record (and "
                             "publish) it; give --commit and --date (the run's)")
    parser.add_argument("--wall-seconds", type=float)
    parser.add_argument("--commit")
    parser.add_argument("--date")
    parser.add_argument("--note", help="how a --finished-run was made, when not by this script "
                        "in one go (printed at the top of the published report)")
    parser.add_argument("--stale", metavar="REASON",
                        help="mark the report published in --publish stale (dated --date, "
                             "default today) until the profile is run and published again")
    args = parser.parse_args(argv)
    if args.stale:
        if args.publish is None:
            parser.error("--stale needs --publish (the published report's folder)")
        mark_stale(args.publish, args.date or date.today().isoformat(), args.stale)
        return
    if args.readme:
        write_readme_table()
        return
    if args.ci_log:
        if args.commit is None or args.date is None:
            parser.error("--ci-log needs --commit and --date")
        record_ci_log(args.ci_log, args.commit, args.date)
        write_readme_table()
        return
    if args.profile is None:
        parser.error("name a profile (quick, paper), `tests`, or give --readme or --ci-log")
    if args.profile == "tests":
        time_unit_tests(current_commit(), date.today().isoformat())
        write_readme_table()
        return
    if args.finished_run:
        missing = [f"--{name.replace('_', '-')}" for name in ("wall_seconds", "commit", "date")
                   if getattr(args, name) is None]
        if missing:
            parser.error(f"--finished-run needs {', '.join(missing)}")
        workdir, wall, commit, day = (args.finished_run, args.wall_seconds, args.commit,
                                      args.date)
    elif args.resume:
        if args.data_mirror is None or args.commit is None or args.date is None:
            parser.error("--resume needs --data-mirror, --commit and --date (the run's)")
        workdir, commit, day = args.resume, args.commit, args.date
        earlier = log_segments(workdir)
        resume_profile(args.profile, args.cores, args.data_mirror, workdir)
        segments = log_segments(workdir)
        if len(segments) <= len(earlier):
            raise SystemExit(f"--resume {workdir}: the resumed run logged no finished job")
        wall = sum((s["end"] - s["start"]).total_seconds() for s in segments)
        args.note = " ".join(filter(None, [segments_note(segments, commit), args.note]))
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
    write_readme_table()


if __name__ == "__main__":
    main()

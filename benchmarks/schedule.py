"""Estimate a profile's wall time on N cores from a finished run's job times.

Lays the job times of a finished run (its ``results/benchmarks/**.tsv``) over the job graph of
a profile at the current commit (``snakemake -n`` in a clean copy of the workflow), and list-
schedules it on each number of cores (:mod:`fedclust.pipeline.schedule`): what the profile
would take now, before hours of running it again. A plan, not a measurement.

    python benchmarks/schedule.py --run /path/to/finished/paper/run --cores 2 4 8

Two estimates: from the jobs' wall times (a rule that now asks for fewer threads than the
measured run's Snakemake logs, ``.snakemake/log/*.log``, show it ran on: from its CPU time),
an upper one where the measured run shared its machine; and from their CPU times, a lower one.
A run made before a partition's coreset runs were split into jobs of ``coreset.runs_per_job``
gives each chunk its share, by runs, of the partition's one job.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml
from snakemake.utils import update_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profiles import REPO, config_file, dry_run  # noqa: E402

from fedclust.pipeline.benchmarks import format_seconds  # noqa: E402
from fedclust.pipeline.schedule import (  # noqa: E402
    PlannedJob,
    job_seconds,
    list_schedule,
    parse_dry_run,
)


def profile_config(profile: str, configfiles: list[str]) -> dict:
    """The profile's config as Snakemake merges it: config.yaml, the profile's file, the rest."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for path in [config_file(profile), *map(Path, configfiles)]:
        update_config(config, yaml.safe_load(path.read_text()))
    return config


def _chunk_of_whole_partition(job, run: Path, basis: str, config: dict):
    """A chunk of a partition's runs, in a run made when one job ran all the runs of it (before
    ``coreset.runs_per_job``): its share of that job's time, by its runs."""
    match = re.fullmatch(r"(.*/coreset/(kmeans|kmedian)/.*)/runs(\d+)-(\d+)\.tsv",
                         job.benchmark or "")
    if job.rule != "coreset_setting" or match is None:
        return None
    whole = run / f"{match.group(1)}.tsv"
    if not whole.exists():
        return None
    section = config["coreset"]
    runs = (section if match.group(2) == "kmeans" else section["kmedian"])["runs"]
    share = (int(match.group(4)) - int(match.group(3)) + 1) / runs
    return share * job_seconds(PlannedJob(job.rule, benchmark=f"{match.group(1)}.tsv",
                                          threads=job.threads), run, basis=basis)


def measured_threads(run: Path) -> dict[str, int]:
    threads: dict[str, int] = {}
    for log in sorted((run / ".snakemake" / "log").glob("*.log")):
        for job in parse_dry_run(log.read_text()):
            threads[job.rule] = max(threads.get(job.rule, 1), job.threads)
    return threads


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True,
                        help="a finished run's directory (its results/benchmarks/)")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--cores", type=int, nargs="+", default=[2])
    parser.add_argument("--configfile", action="append", default=[],
                        help="further config files merged over the profile's")
    args = parser.parse_args(argv)
    extra = [f for path in args.configfile for f in ("--configfile", path)]
    jobs = parse_dry_run(dry_run(args.profile, extra))
    then = measured_threads(args.run)
    config = profile_config(args.profile, args.configfile)

    def measured(job, basis):
        if job.benchmark and not (args.run / job.benchmark).exists():
            share = _chunk_of_whole_partition(job, args.run, basis, config)
            if share is not None:
                return share
        return job_seconds(job, args.run, basis=basis, measured_threads=then)

    print(f"{args.profile} profile at this commit: {len(jobs)} jobs, from {args.run}")
    print("| cores | job times | job time | longest path first | dry run's order |\n"
          "|---|---|---|---|---|")
    for basis in ("wall", "cpu"):
        seconds = [measured(job, basis) for job in jobs]
        for cores in args.cores:
            print(f"| {cores} | {basis} | {format_seconds(sum(seconds))} | "
                  f"{format_seconds(list_schedule(jobs, seconds, cores))} | "
                  f"{format_seconds(list_schedule(jobs, seconds, cores, order='dry_run'))} |")
    unmeasured = sorted({job.rule for job in jobs if job.benchmark
                         and not (args.run / job.benchmark).exists()
                         and _chunk_of_whole_partition(job, args.run, "wall", config) is None})
    if unmeasured:
        print(f"not in that run (taken as 0 s): {', '.join(unmeasured)}")


if __name__ == "__main__":
    main()

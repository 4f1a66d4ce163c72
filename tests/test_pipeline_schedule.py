"""Planning a profile's wall time: a dry run's job graph, measured job times, a list schedule."""

import pytest

from fedclust.pipeline.schedule import PlannedJob, job_seconds, list_schedule, parse_dry_run

DRY_RUN = """\
Building DAG of jobs...
[Thu Nov 26 16:58:02 2026]
rule make_a:
    output: results/a.csv
    log: results/logs/a.log
    jobid: 3
    benchmark: results/benchmarks/make_a/a.tsv
    reason: Missing output files: results/a.csv
    resources: tmpdir=/tmp, mem_mb=500
[Thu Nov 26 16:58:02 2026]
localrule both:
    input: results/a.csv, results/b.csv
    output: results/both.csv
    jobid: 1
    benchmark: results/benchmarks/both/both.tsv
    threads: 2
    resources: tmpdir=/tmp, mem_mb=500
[Thu Nov 26 16:58:02 2026]
rule make_b:
    output: results/b.csv
    jobid: 4
Job stats:
"""

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def test_dry_run_printout_parsed_into_jobs():
    a, both, b = parse_dry_run(DRY_RUN)
    assert (a.rule, a.outputs, a.inputs, a.threads) == ("make_a", ["results/a.csv"], [], 1)
    assert a.benchmark == "results/benchmarks/make_a/a.tsv"
    assert (both.rule, both.inputs, both.threads) == (
        "both", ["results/a.csv", "results/b.csv"], 2)
    assert (b.rule, b.benchmark) == ("make_b", None)


def test_job_seconds_wall_cpu_and_fewer_threads(tmp_path):
    path = tmp_path / "results/benchmarks/both/both.tsv"
    path.parent.mkdir(parents=True)
    path.write_text(HEADER + "100.0\t0:01:40\t1\t1\t1\t1\t0\t0\t150\t150.0\n")
    job = PlannedJob("both", benchmark="results/benchmarks/both/both.tsv", threads=2)
    assert job_seconds(job, tmp_path) == 100.0
    assert job_seconds(job, tmp_path, basis="cpu") == 75.0  # 150 CPU s over 2 threads
    # measured on 2 threads, asking for 1 now: the work of both threads on one
    one = PlannedJob("both", benchmark=job.benchmark, threads=1)
    assert job_seconds(one, tmp_path, measured_threads={"both": 2}) == 150.0
    assert job_seconds(PlannedJob("x", benchmark="missing.tsv"), tmp_path, default=3) == 3
    with pytest.raises(ValueError, match="basis must be 'wall' or 'cpu'"):
        job_seconds(job, tmp_path, basis="mean")


def test_list_schedule_packs_ready_jobs_and_waits_for_inputs():
    a, both, b = parse_dry_run(DRY_RUN)
    # a (3 s) and b (2 s) side by side, then both (4 s) on the two cores: 3 + 4
    assert list_schedule([a, both, b], [3.0, 4.0, 2.0], 2) == 7.0
    # one core: everything in turn
    assert list_schedule([a, both, b], [3.0, 4.0, 2.0], 1) == 9.0
    # three independent jobs on 2 cores: the longest first leaves the two short ones together
    jobs = [PlannedJob("x", outputs=[f"{i}"]) for i in range(3)]
    assert list_schedule(jobs, [1.0, 1.0, 2.0], 2) == 2.0
    assert list_schedule(jobs, [1.0, 1.0, 2.0], 2, order="dry_run") == 3.0
    with pytest.raises(ValueError, match="cores must be at least 1"):
        list_schedule(jobs, [1.0, 1.0, 2.0], 0)

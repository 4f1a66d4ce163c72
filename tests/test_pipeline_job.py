"""What every script runs in: log file, threads, and the error that reaches the terminal."""

import logging
import sys
import time
from types import SimpleNamespace

import pytest
from threadpoolctl import threadpool_info

from fedclust.pipeline.job import job
from fedclust.progress import progress


def fake_snakemake(tmp_path, threads=1):
    return SimpleNamespace(rule="toy_rule", log=[str(tmp_path / "logs" / "toy.log")],
                           threads=threads)


def test_logs_progress_and_threads_go_where_they_should(tmp_path, monkeypatch):
    import os

    import numba
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # restored after the test
    threads_before = numba.get_num_threads()
    with job(fake_snakemake(tmp_path, threads=1)) as log:
        log.info("hello")
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert all(p["num_threads"] == 1 for p in blas)
        assert numba.get_num_threads() == 1  # the kernel's threads too
        for _ in progress(range(3), desc="counting", interval=0.0):
            pass
        print("stray", file=sys.stderr)
    numba.set_num_threads(threads_before)
    text = (tmp_path / "logs" / "toy.log").read_text()
    assert "rule toy_rule: 1 thread(s)" in text and "hello" in text
    assert "counting: done 3/3 it (100%)" in text and "stray" in text
    assert "\r" not in text
    assert sys.stderr is sys.__stderr__ or not sys.stderr.closed


def test_a_failure_is_logged_in_full_and_named_on_the_terminal(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info, job(fake_snakemake(tmp_path)):
        raise FileNotFoundError("data/x.csv: missing")
    assert exit_info.value.code == 1
    terminal = capsys.readouterr().err
    assert "Error in rule toy_rule: FileNotFoundError: data/x.csv: missing" in terminal
    assert "(full log:" in terminal
    text = (tmp_path / "logs" / "toy.log").read_text()
    assert "Traceback" in text and "data/x.csv: missing" in text
    logging.getLogger().handlers.clear()


def test_a_finished_job_prints_one_line_with_its_wildcards_and_time(tmp_path, capsys):
    from snakemake.iocontainers import Wildcards

    snakemake = fake_snakemake(tmp_path)
    snakemake.wildcards = Wildcards(fromdict={"dataset": "mnist", "run": "3"})
    with job(snakemake):
        pass
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("done toy_rule (dataset=mnist, run=3) in ")
    assert lines[0].endswith(" s")
    logging.getLogger().handlers.clear()
    with job(fake_snakemake(tmp_path)):   # no wildcards
        pass
    assert capsys.readouterr().err.startswith("done toy_rule in ")
    logging.getLogger().handlers.clear()


def test_a_job_stops_when_the_snakemake_that_started_it_is_killed(tmp_path):
    """A job whose parent dies by SIGKILL (which the parent cannot pass on) stops by itself
    within a few checks, logging why; while the parent lives it runs on."""
    import signal
    import subprocess
    import sys
    import textwrap

    log = tmp_path / "job.log"
    child = textwrap.dedent(f"""
        import logging, time
        from fedclust.pipeline.job import stop_when_orphaned
        logging.basicConfig(filename={str(log)!r}, level=logging.INFO, force=True)
        stop_when_orphaned("slow_rule", logging.getLogger("fedclust"), interval=0.1)
        time.sleep(60)
    """)
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time; "
         f"p = subprocess.Popen([sys.executable, '-c', {child!r}]); print(p.pid, flush=True); "
         "time.sleep(120)"], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    time.sleep(1.0)
    assert _alive(pid)  # the parent lives: the job runs on
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)
    assert "rule slow_rule: the Snakemake that started it" in log.read_text()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False

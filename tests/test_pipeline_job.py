"""What every script runs in: log file, threads, and the error that reaches the terminal."""

import logging
import sys
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

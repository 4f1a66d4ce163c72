"""A damaged derived file made again before the DAG: the same bytes get their date back."""

from __future__ import annotations

import os

import pytest

from fedclust.io import remove_damaged_files, sha256_of
from fedclust.pipeline.rebuild import rebuild_keeping_dates

#: One rule writing its config's text with a checksum sidecar, as every job of the pipeline.
SNAKEFILE = '''
rule text:
    output:
        "out/{name}.txt",
    run:
        from fedclust.io import atomic_path

        if config.get("fail"):
            raise ValueError("this rule fails")
        with atomic_path(output[0], sidecar=True) as tmp:
            tmp.write_text(config["text"] + wildcards.name)
'''


@pytest.fixture
def workflow(tmp_path):
    """A finished run of two files written an hour ago, then ``out/a.txt`` cut short."""
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    for name in "ab":
        path = tmp_path / "out" / f"{name}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text("hello " + name)
        path.with_name(path.name + ".sha256").write_text(f"{sha256_of(path)}  {path.name}\n")
    hour_ago = (os.stat(tmp_path / "out" / "a.txt").st_mtime_ns - 3600 * 10**9)
    for path in (tmp_path / "out").iterdir():
        os.utime(path, ns=(hour_ago, hour_ago))
    (tmp_path / "out" / "a.txt").write_text("hel")  # damaged: its date is now
    return tmp_path, hour_ago


def _rebuild(workdir, text, **config):
    recorded = {}
    lines = remove_damaged_files(["out"], recorded=recorded)
    assert len(lines) == 1 and lines[0].startswith("out/a.txt: sha256")
    assert not (workdir / "out" / "a.txt").exists()
    return recorded, rebuild_keeping_dates(recorded, snakefile=workdir / "Snakefile",
                                           config={"text": text, **config}, cores=1)


def test_the_same_bytes_get_their_recorded_date_back(workflow, monkeypatch):
    workdir, hour_ago = workflow
    monkeypatch.chdir(workdir)
    recorded, lines = _rebuild(workdir, "hello ")
    a = workdir / "out" / "a.txt"
    assert a.read_text() == "hello a" and a.stat().st_mtime_ns == hour_ago
    assert lines == ["out/a.txt: made again with the bytes it was written with; its date "
                     "kept, so nothing made from it reruns"]
    # the file that was not damaged is untouched; no config file is left behind
    assert (workdir / "out" / "b.txt").stat().st_mtime_ns == hour_ago
    assert not (workdir / ".snakemake" / "fedclust-rebuild-config.yaml").exists()
    assert set(recorded) == {a.relative_to(workdir), (workdir / "out" / "b.txt")
                             .relative_to(workdir)}


def test_other_bytes_keep_their_new_date(workflow, monkeypatch):
    workdir, hour_ago = workflow
    monkeypatch.chdir(workdir)
    _, lines = _rebuild(workdir, "changed ")
    a = workdir / "out" / "a.txt"
    assert a.read_text() == "changed a" and a.stat().st_mtime_ns > hour_ago
    assert lines == ["out/a.txt: made again with other bytes than it was written with; what "
                     "reads it reruns"]


def test_a_failed_rebuild_leaves_the_file_to_the_main_run(workflow, monkeypatch):
    workdir, _ = workflow
    monkeypatch.chdir(workdir)
    _, lines = _rebuild(workdir, "hello ", fail=True)
    assert not (workdir / "out" / "a.txt").exists()
    assert len(lines) == 1 and lines[0].startswith("out/a.txt: not made again before the run")
    assert lines[0].endswith("this run makes it, and what reads it")

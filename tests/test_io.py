import logging
import os

import numpy as np
import pandas as pd
import pytest

from fedclust.io import (
    atomic_path,
    concat_tables,
    current_umask,
    kernel_cpu,
    skipped,
    skipped_with_warning,
    tidy,
    write_table,
)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_outputs_get_the_users_umask_not_the_temporary_files_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        assert current_umask() == umask
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv")
    finally:
        os.umask(old)
    assert (tmp_path / "t.csv").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "out.csv") as tmp:
        tmp.write_text("half")
        raise RuntimeError("job failed")
    assert list(tmp_path.iterdir()) == []


def test_tidy_writes_skipped_runs_with_their_reason():
    records = [{"p": 0.5, "run": 0, "cost": 2.0, "accuracy": 1.0},
               skipped({"p": 0.1, "run": 0}, "too few local centres")]
    table = tidy(records, ["p", "run"])
    assert set(table.metric) == {"cost", "accuracy", "skipped"}
    row = table[table.metric == "skipped"].iloc[0]
    assert row.p == 0.1 and row.value == 1.0 and row.reason == "too few local centres"
    assert (table[table.metric != "skipped"].reason == "").all()
    assert not table.value.isna().any()
    assert "reason" not in tidy(records[:1], ["p", "run"]).columns


def test_a_skipped_run_is_logged_on_the_experiments_own_logger(caplog):
    log = logging.getLogger("fedclust.papers.toy.experiments")
    with caplog.at_level(logging.WARNING):
        record = skipped_with_warning({"p": 0.1, "run": 2}, ValueError("too few local centres"),
                                      "toy p=0.1 run 2", log)
    assert record == skipped({"p": 0.1, "run": 2}, "too few local centres")
    [line] = caplog.records
    assert line.name == "fedclust.papers.toy.experiments" and line.levelno == logging.WARNING
    assert line.getMessage() == "skipped toy p=0.1 run 2: too few local centres"


def test_concat_tables_adds_an_empty_reason_and_names_mismatches():
    a = pd.DataFrame({"x": [1], "metric": ["m"], "value": [1.0]})
    b = a.assign(reason="skipped for a reason")
    both = concat_tables([a, b], ["a.csv", "b.csv"])
    assert both.reason.tolist() == ["", "skipped for a reason"]
    with pytest.raises(ValueError, match=r"c.csv: columns \['metric', 'value', 'y'\] differ"):
        concat_tables([a, a.rename(columns={"x": "y"})], ["a.csv", "c.csv"])
    assert np.array_equal(concat_tables([a], ["a.csv"]).value, [1.0])


def test_orphans_of_a_killed_write_are_found_and_removed(tmp_path):
    from fedclust.io import remove_orphan_temporaries
    # what a SIGKILL inside `with atomic_path(...)` leaves: the temporary file, named for it
    target = tmp_path / "results" / "part.csv"
    manager = atomic_path(target)
    tmp = manager.__enter__()
    tmp.write_text("half")
    keep = tmp_path / "results" / ".hidden_but_ours.csv"
    keep.write_text("not a temporary file")
    nested = tmp_path / "figures" / "a" / ".fig.png.tmp-abc.png"
    nested.parent.mkdir(parents=True)
    nested.write_bytes(b"png")
    removed = remove_orphan_temporaries([tmp_path / "results", tmp_path / "figures",
                                         tmp_path / "absent"])
    assert sorted(removed) == sorted([tmp, nested])
    assert not tmp.exists() and not nested.exists() and keep.exists() and not target.exists()


def test_provenance_names_the_commit_the_dirty_tree_the_machine_and_the_blas(tmp_path):
    import subprocess

    import yaml

    from fedclust.io import provenance, run_config_text

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    clean = provenance(tmp_path)
    assert clean["commit"] == git("rev-parse", "HEAD") and clean["dirty"] is False
    (tmp_path / "a.txt").write_text("two\n")
    assert provenance(tmp_path)["dirty"] is True
    (tmp_path / "untracked.txt").write_text("")          # untracked files do not count
    git("checkout", "-q", "a.txt")
    assert provenance(tmp_path)["dirty"] is False
    assert provenance(tmp_path / "nowhere")["commit"] == "not a git checkout"
    machine = clean["machine"]
    assert machine["cores"] == os.cpu_count() and machine["cpu"]
    assert machine["kernels_for"] == kernel_cpu() not in ("", "unknown")
    # numpy is loaded: its BLAS is listed with its thread count
    assert any(lib["user_api"] == "blas" and lib["threads"] >= 1 for lib in clean["blas"])
    text = yaml.safe_load(run_config_text({"seed": 1}, tmp_path))
    assert list(text) == ["config", "versions", "provenance"]
    assert text["provenance"]["commit"] == clean["commit"]


def test_an_output_folder_that_cannot_take_the_outputs_is_named_in_one_line(tmp_path,
                                                                            monkeypatch):
    from pathlib import Path

    from fedclust.exceptions import OutputFolderError
    from fedclust.io import check_output_folders

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    check_output_folders(["results", "figures"])          # writable, or to be made: fine
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["results"]   # no probe left
    (tmp_path / "figures").write_text("")
    with pytest.raises(OutputFolderError, match=r"^figures/ is not a folder"):
        check_output_folders(["figures"])
    readonly = Path("/sys/kernel")   # a folder no user, root included, can create files in
    if not readonly.is_dir():
        pytest.skip("needs Linux's /sys")
    (tmp_path / "data").symlink_to(readonly)
    with pytest.raises(OutputFolderError) as error:
        check_output_folders(["data"])
    assert str(error.value).startswith("data/ is not writable (")
    assert len(str(error.value).splitlines()) == 1
    with pytest.raises(OutputFolderError, match=r"^results/ has \d+ MB free, less than"):
        check_output_folders(["results"], min_free_mb=10**12)


def test_a_derived_file_whose_bytes_changed_is_found_by_its_sidecar(tmp_path):
    from fedclust.data.cache import read_h5, write_h5
    from fedclust.io import remove_damaged_files, sha256_of, sidecar_of

    path = write_h5(tmp_path / "data" / "x" / "features.h5", {"X": np.arange(1000.0)})
    sidecar = sidecar_of(path)
    assert sidecar.read_text() == f"{sha256_of(path)}  features.h5\n"   # sha256sum's format
    # the sidecar is dated as its file: the date a damaged file was written with is known
    written, digest = path.stat().st_mtime_ns, sha256_of(path)
    assert sidecar.stat().st_mtime_ns == written
    assert remove_damaged_files([tmp_path / "data"]) == [] and path.exists()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])          # truncated, as a cut-short copy
    with pytest.raises(OSError, match=r"features.h5 is damaged .*remove it and run again"):
        read_h5(path)
    recorded = {}
    removed = remove_damaged_files([tmp_path / "data"], recorded=recorded)
    assert recorded == {path: (digest, written)}
    assert len(removed) == 1 and removed[0].startswith(f"{path}: sha256 ")
    assert not path.exists() and not sidecar.exists()
    # a sidecar left without its file (its job failed and Snakemake removed the output)
    write_h5(path, {"X": np.arange(3.0)})
    path.unlink()
    assert remove_damaged_files([tmp_path / "data"]) == [] and not sidecar.exists()



@pytest.mark.parametrize("damage", ["cut at a line", "cut mid-row", "a byte changed"])
def test_a_damaged_result_table_is_named_removed_and_never_read(tmp_path, damage):
    """A table written by write_table carries its sha256: read_table refuses a damaged one,
    naming it and removing it (so the next run makes it again); a dry run of the start-up
    check names it and leaves it."""
    from fedclust.exceptions import DamagedFileError
    from fedclust.io import read_table, remove_damaged_files, sidecar_of, write_table

    path = tmp_path / "results" / "t.csv"
    table = pd.DataFrame({"run": range(6), "metric": "cost", "value": np.linspace(1, 2, 6)})
    write_table(table, path)
    pd.testing.assert_frame_equal(read_table(path), table)
    clean = path.read_bytes()
    lines = clean.splitlines(keepends=True)
    damaged = {"cut at a line": b"".join(lines[:4]), "cut mid-row": clean[: len(clean) // 2],
               "a byte changed": clean.replace(b"1.2", b"1.3", 1)}[damage]
    assert damaged != clean
    path.write_bytes(damaged)
    found = remove_damaged_files([tmp_path / "results"], dry_run=True)
    assert len(found) == 1 and "(a run would remove it)" in found[0]
    assert path.read_bytes() == damaged
    with pytest.raises(DamagedFileError, match=r"t\.csv: damaged .*removed; run the pipeline"):
        read_table(path)
    assert not path.exists() and not sidecar_of(path).exists()


def test_the_kernels_cpu_is_numbas_target(monkeypatch):
    import llvmlite.binding as llvm

    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    assert kernel_cpu() == llvm.get_host_cpu_name()
    monkeypatch.setenv("NUMBA_CPU_NAME", "haswell")
    assert kernel_cpu() == "haswell"

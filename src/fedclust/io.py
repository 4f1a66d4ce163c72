"""Writing results: tidy tables, atomically, with the user's permissions.

A result table is tidy: one row per run and metric, with the run's parameters as columns and
the two columns ``metric`` and ``value`` last. A run that could not be done (an
:class:`~fedclust.exceptions.InfeasibleSettingError`) is one row with metric ``skipped``, value
1 and the reason in a ``reason`` column, never a silent NaN. Files are written to a temporary
name in the target folder and renamed into place, so a failed job never leaves a half-written
output; the file then gets the permissions the user's umask gives (a temporary file is
created owner-only).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path

import pandas as pd

from .exceptions import DamagedFileError

__all__ = ["atomic_path", "remove_orphan_temporaries", "current_umask", "write_table",
           "sidecar_of", "sha256_of", "remove_damaged_files", "check_sidecar", "SIDECAR_SUFFIX",
           "read_table", "tidy", "skipped",
           "concat_tables", "write_text", "run_config_text", "VERSIONED_PACKAGES",
           "TIDY_COLUMNS", "SKIPPED"]

TIDY_COLUMNS = ("metric", "value")
#: What marks a temporary file of :func:`atomic_path` (``.<name>.tmp-<random><suffix>``).
_TEMPORARY = ".tmp-"
#: The metric of a run that could not be done; its ``reason`` column says why.
SKIPPED = "skipped"


def current_umask() -> int:
    """The process's umask (read without changing it where the system allows)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # no other way: set and restore at once
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path, *, suffix: str | None = None, sidecar: bool = False):
    """Yield a temporary path next to ``path``; rename it onto ``path`` if the block succeeds.

    The file gets mode ``0o666 & ~umask`` (what ``open`` would have given it), not the
    owner-only mode of the temporary file. With ``sidecar``, its sha256 is written beside it
    (:func:`sidecar_of`, in ``sha256sum`` format, dated as the file) right after: a file whose
    bytes no longer match (a truncated copy, a disk error) is found by
    :func:`remove_damaged_files`. The old
    sidecar is removed before the rename, so a process killed between the two renames leaves
    a file without a sidecar, never one with a wrong sidecar.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{_TEMPORARY}",
                               suffix=path.suffix if suffix is None else suffix)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~current_umask())
        digest = sha256_of(tmp) if sidecar else None
        sidecar_of(path).unlink(missing_ok=True)
        os.replace(tmp, path)
        if sidecar:
            write_text(f"{digest}  {path.name}\n", sidecar_of(path))
            # the sidecar keeps the file's date: a damaged file's is known from it
            written = path.stat().st_mtime_ns
            os.utime(sidecar_of(path), ns=(written, written))
    finally:
        tmp.unlink(missing_ok=True)


#: The suffix of a derived file's checksum sidecar (``features.h5`` -> ``features.h5.sha256``).
SIDECAR_SUFFIX = ".sha256"


def sidecar_of(path) -> Path:
    """The checksum sidecar of ``path``."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def sha256_of(path, chunk: int = 1 << 22) -> str:
    """The sha256 of a file's bytes, read in chunks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _sidecar_mismatch(path, sidecar) -> str:
    """"sha256 <actual>..., written as <recorded>..." when ``path``'s bytes are not those its
    ``sidecar`` records, else ""."""
    expected = (Path(sidecar).read_text().split(maxsplit=1) or [""])[0]
    actual = sha256_of(path)
    if actual == expected:
        return ""
    return f"sha256 {actual[:12]}..., written as {expected[:12] or '(empty sidecar)'}..."


def remove_damaged_files(folders, *, dry_run: bool = False,
                         recorded: dict | None = None) -> list[str]:
    """Check every file under ``folders`` that has a checksum sidecar against it; remove each
    whose bytes no longer match (and its sidecar), so the rule that made it makes it again in
    the same run, before any job reads it. A sidecar whose file is gone is removed too.

    Only safe while no writer runs (the Snakefile calls it in the main process, before the
    DAG is built). Returns one line per removed file: its path and the two checksums. With
    ``dry_run`` (``snakemake -n``) nothing is removed: the lines say what a run would remove.
    ``recorded``, a dict, receives ``path -> (sha256, date)`` of every checked file, the
    bytes and date it was written with (a removed file's date: its sidecar's), so that a
    rebuild to the same bytes can be given its date back
    (:func:`fedclust.pipeline.rebuild.rebuild_keeping_dates`).
    """
    removed = []
    for folder in map(Path, folders):
        if not folder.is_dir():
            continue
        for sidecar in sorted(folder.rglob(f"*{SIDECAR_SUFFIX}")):
            path = sidecar.with_name(sidecar.name.removesuffix(SIDECAR_SUFFIX))
            if not path.is_file():
                if not dry_run:
                    sidecar.unlink()
                continue
            mismatch = _sidecar_mismatch(path, sidecar)
            if recorded is not None:
                written = (sidecar if mismatch else path).stat().st_mtime_ns
                recorded[path] = ((sidecar.read_text().split(maxsplit=1) or [""])[0], written)
            if mismatch:
                if not dry_run:
                    path.unlink()
                    sidecar.unlink()
                removed.append(f"{path}: {mismatch}"
                               + (" (a run would remove it)" if dry_run else ""))
    return removed


def remove_orphan_temporaries(folders) -> list[Path]:
    """Remove the temporary files of :func:`atomic_path` left under ``folders`` by a process
    killed mid-write (``SIGKILL``, a node lost), which nothing else would ever remove.

    Only safe while no writer runs: the Snakefile calls it on start, holding Snakemake's lock
    on the working directory, before the first job. Returns the removed paths.
    """
    removed = []
    for folder in map(Path, folders):
        if folder.is_dir():
            for orphan in folder.rglob(f".*{_TEMPORARY}*"):
                if orphan.is_file():
                    orphan.unlink()
                    removed.append(orphan)
    return removed


#: Free space an output folder needs before a run starts (a full disk fails jobs midway).
MIN_FREE_MB = 50


def check_output_folders(folders, *, min_free_mb: int = MIN_FREE_MB) -> None:
    """Raise :class:`~fedclust.exceptions.OutputFolderError`, one line naming the folder, when
    one of ``folders`` cannot take the run's outputs: not a folder, not writable (permissions,
    a read-only file system), or with less than ``min_free_mb`` MB free.

    Writes and removes one empty file per folder (the only test that holds for root and for
    read-only mounts alike); a folder that does not exist yet is tested where it will be made.
    """
    import shutil
    import tempfile

    from .exceptions import OutputFolderError

    for folder in map(Path, folders):
        if folder.exists() and not folder.is_dir():
            raise OutputFolderError(f"{folder}/ is not a folder: move {folder} away")
        where = folder if folder.is_dir() else folder.resolve().parent
        try:
            with tempfile.NamedTemporaryFile(dir=where, prefix=f".{_TEMPORARY}probe"):
                pass
        except OSError as error:
            raise OutputFolderError(
                f"{folder}/ is not writable ({error.strerror}): the run would fail at its first "
                f"output; make it writable or run from another working directory") from None
        free_mb = shutil.disk_usage(where).free / 2**20
        if free_mb < min_free_mb:
            raise OutputFolderError(f"{folder}/ has {free_mb:.0f} MB free, less than the "
                                    f"{min_free_mb} MB a run needs: free some space")


def write_table(df: pd.DataFrame, path) -> None:
    """Write ``df`` as CSV atomically, its sha256 in a sidecar (:func:`sidecar_of`): a table
    cut short or changed afterwards is found by :func:`read_table` and, on the next run's
    start, by :func:`remove_damaged_files`."""
    with atomic_path(path, sidecar=True) as tmp:
        df.to_csv(tmp, index=False)


def write_text(text: str, path) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def check_sidecar(path) -> None:
    """Raise :class:`~fedclust.exceptions.DamagedFileError` naming ``path`` when its bytes
    are no longer those its checksum sidecar holds, after removing it and the sidecar (so
    the run that comes next makes it again); a file without a sidecar is not checked."""
    sidecar = sidecar_of(path)
    if not sidecar.is_file():
        return
    mismatch = _sidecar_mismatch(path, sidecar)
    if mismatch:
        Path(path).unlink(missing_ok=True)
        sidecar.unlink(missing_ok=True)
        raise DamagedFileError(f"{path}: damaged ({mismatch}): removed; run the pipeline "
                               f"again to make it again")


def read_table(path, *, required=()) -> pd.DataFrame:
    """Read a CSV result table, after checking its bytes against its checksum sidecar
    (:func:`check_sidecar`) and then that the ``required`` columns are present."""
    check_sidecar(path)
    df = pd.read_csv(path)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; has {list(df.columns)}")
    return df


def concat_tables(tables: list[pd.DataFrame], names: list[str]) -> pd.DataFrame:
    """Concatenate tidy tables with the same columns (in any order).

    A ``reason`` column (skipped runs) present in some tables only is added, empty, to the
    others; any other difference in columns is an error naming the two tables (``names``).
    """
    if not tables:
        raise ValueError("no tables to concatenate")
    reason = any("reason" in t.columns for t in tables)
    if reason:
        tables = [t if "reason" in t.columns else t.assign(reason="") for t in tables]
    columns = list(tables[0].columns)
    for name, table in zip(names, tables, strict=True):
        if set(table.columns) != set(columns):
            raise ValueError(f"{name}: columns {sorted(table.columns)} differ from "
                             f"{sorted(columns)} ({names[0]})")
    return pd.concat([table[columns] for table in tables], ignore_index=True)


def skipped(record: dict, reason) -> dict:
    """A record for a run that could not be done: ``record``'s ids plus the reason."""
    return {**record, "__skipped__": str(reason)}


def skipped_with_warning(record: dict, reason, where: str, log: logging.Logger) -> dict:
    """:func:`skipped`, with a warning ``skipped <where>: <reason>`` on ``log`` (the
    experiment's own logger, so that the line names the module that skipped the run)."""
    log.warning("skipped %s: %s", where, reason)
    return skipped(record, reason)


def tidy(records: list[dict], id_columns) -> pd.DataFrame:
    """Turn per-run records ``{param..., metric_a: x, metric_b: y}`` into tidy rows.

    ``id_columns`` are kept as columns; every other key becomes a ``(metric, value)`` row. A
    record made by :func:`skipped` becomes one row with metric ``skipped``, value 1 and its
    reason in the ``reason`` column (a table with any skipped run has that column; the other
    rows leave it empty).
    """
    id_columns = list(id_columns)
    done = [r for r in records if "__skipped__" not in r]
    failed = [r for r in records if "__skipped__" in r]
    frames = []
    if done:
        wide = pd.DataFrame.from_records(done)
        frames.append(wide.melt(id_vars=id_columns, var_name="metric", value_name="value"))
    if failed:
        frames.append(pd.DataFrame.from_records(
            [{**{c: r[c] for c in id_columns}, "metric": SKIPPED, "value": 1.0,
              "reason": r["__skipped__"]} for r in failed]))
    if not frames:
        return pd.DataFrame(columns=id_columns + list(TIDY_COLUMNS))
    long = pd.concat(frames, ignore_index=True)
    if failed:
        long["reason"] = long["reason"].fillna("")
        long = long[id_columns + list(TIDY_COLUMNS) + ["reason"]]
    return long.sort_values(id_columns + ["metric"], kind="stable").reset_index(drop=True)


#: Packages whose versions decide the numbers (written beside every run's configuration).
VERSIONED_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "networkx", "torch",
                      "torchvision", "snakemake", "fedclust")


def run_config_text(config: dict, checkout=None) -> str:
    """The resolved ``config``, the Python and package versions and the run's provenance
    (:func:`provenance`; ``checkout``: the workflow's folder), as YAML text."""
    import platform
    from importlib import metadata

    import yaml

    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return yaml.safe_dump({"config": config, "versions": versions,
                           "provenance": provenance(checkout)}, sort_keys=False)


def kernel_cpu() -> str:
    """The CPU numba compiles the kernels for: ``NUMBA_CPU_NAME`` where set, else the host's
    as LLVM names it (e.g. ``znver3``, ``emeraldrapids``). Kernels compiled for different
    CPUs may round differently in the last bits, so a run's numbers are reproduced bit for
    bit only where this name is the same (docs/reproduction.md)."""
    import os

    if os.environ.get("NUMBA_CPU_NAME"):
        return os.environ["NUMBA_CPU_NAME"]
    try:
        import llvmlite.binding as llvm

        return str(llvm.get_host_cpu_name())
    except (ImportError, RuntimeError, OSError):
        return "unknown"


def provenance(checkout=None) -> dict:
    """Where and from what a run was made: the checkout's git commit and whether its tracked
    files differ from it (``dirty``), the machine (CPU model, the CPU the kernels were
    compiled for, cores, memory) and the BLAS libraries numpy and scipy loaded, with their
    thread counts (threadpoolctl)."""
    import os
    import platform
    import subprocess

    from threadpoolctl import threadpool_info

    def git(*args) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(checkout or "."), *args],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        models = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                  if line.startswith("model name")]
        cpu = models[0] if models else cpu
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = None
    return {
        "commit": commit or "not a git checkout",
        "dirty": bool(status) if commit else None,
        "machine": {"cpu": cpu, "kernels_for": kernel_cpu(), "cores": os.cpu_count(),
                    "system": platform.platform(),
                    "memory_gib": None if memory is None else round(memory, 1)},
        "blas": [{"library": info.get("internal_api"), "version": info.get("version"),
                  "threads": info.get("num_threads"), "user_api": info.get("user_api")}
                 for info in threadpool_info()],
    }

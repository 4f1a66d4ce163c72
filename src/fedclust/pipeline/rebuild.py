"""Make damaged derived files again before the run's DAG, so that the same bytes keep their date.

Snakemake decides what to run by dates, once, before the first job: a file it must make
again reruns everything made from it, even when the new bytes equal the old. A derived file
found damaged at the start of a run (:func:`fedclust.io.remove_damaged_files`) is therefore
made again here, by a Snakemake run of its own on just those files, before the main run
builds its DAG; every checked file that comes back with the bytes it was written with gets
back the date it was written with, so the main run finds what was made from it up to date
and runs nothing for it. Bytes that differ (the code or an input changed) keep their new
date, and what reads them reruns as it should.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from ..io import atomic_path, sha256_of

__all__ = ["rebuild_keeping_dates", "REBUILDING"]

#: Set in the environment of the rebuilding run, so that it does not rebuild in turn.
REBUILDING = "FEDCLUST_REBUILDING"


def rebuild_keeping_dates(recorded: dict, *, snakefile, config: dict, cores,
                          workdir=".") -> list[str]:
    """Make the checked files that were removed as damaged again, in a Snakemake run of their
    own, then give every checked file whose bytes are those it was written with its recorded
    date back.

    Parameters
    ----------
    recorded : dict
        ``path -> (sha256, date in ns)`` of every checked file, as
        :func:`fedclust.io.remove_damaged_files` fills it (paths relative to ``workdir``);
        those no longer there are the damaged ones it removed.
    snakefile : path
        The workflow's Snakefile.
    config : dict
        This run's config, after its files and ``--config`` were merged: the rebuilding run
        reads it from a file under ``.snakemake/``.
    cores : int or None
        Cores of the rebuilding run (None: 1). It runs locally, whatever this run's executor.
    workdir : path, default="."

    Returns
    -------
    list of str
        One line per removed file: made again with its bytes and date, or with other bytes,
        or not made (the main run then makes it, and reruns what reads it).
    """
    workdir = Path(workdir)
    removed = [path for path in recorded if not (workdir / path).is_file()]
    if not removed:
        return []
    settings = workdir / ".snakemake" / "fedclust-rebuild-config.yaml"
    with atomic_path(settings) as tmp:
        tmp.write_text(yaml.safe_dump(config, sort_keys=False))
    # the targets first: --configfile takes every word after it
    command = [sys.executable, "-m", "snakemake", *map(str, removed), "--snakefile",
               str(snakefile), "--directory", str(workdir), "--cores", str(cores or 1),
               "--configfile", str(settings)]
    try:  # its progress shows in this run's terminal
        done = subprocess.run(command, env={**os.environ, REBUILDING: "1"}, cwd=workdir)
    finally:
        settings.unlink(missing_ok=True)
    restored = set()
    for path, (sha, written) in recorded.items():
        made = workdir / path
        if made.is_file() and made.stat().st_mtime_ns != written and sha256_of(made) == sha:
            os.utime(made, ns=(written, written))
            restored.add(path)
    lines = []
    for path in removed:
        if not (workdir / path).is_file():
            lines.append(f"{path}: not made again before the run (that Snakemake exited "
                         f"{done.returncode}, its log above); this run makes it, and what "
                         f"reads it")
        elif path in restored:
            lines.append(f"{path}: made again with the bytes it was written with; its date "
                         f"kept, so nothing made from it reruns")
        else:
            lines.append(f"{path}: made again with other bytes than it was written with; "
                         f"what reads it reruns")
    return lines

"""Whether the lock on a working directory is held by a live Snakemake or left by a dead one.

Snakemake locks the files a run will write (``.snakemake/locks/``) and answers a second run
with "Directory cannot be locked ... run snakemake --unlock" whether the first still runs
(then ``--unlock`` lets two runs write the same files) or was killed (then it is what to do).
:func:`lock_holders` looks for the other Snakemake processes working in the folder (Linux's
``/proc``); :func:`lock_message` says which case it is, for the Snakefile to stop on or warn.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

__all__ = ["lock_holders", "lock_message", "snakemake_ancestor", "stop_with_snakemake"]


def _is_snakemake(argv: list[str]) -> bool:
    """Whether a command line runs Snakemake itself (``snakemake ...``, ``python -m
    snakemake ...``), not a job script under ``.snakemake/scripts``."""
    for i, arg in enumerate(argv[:3]):
        if os.path.basename(arg) == "snakemake" or (arg == "-m" and i + 1 < len(argv)
                                                    and argv[i + 1] == "snakemake"):
            return True
    return False


def lock_holders(folder, *, proc=Path("/proc"), me: int | None = None) -> list[int]:
    """Process ids of the Snakemake processes other than ``me`` (default: this process and
    its ancestors) whose working directory is ``folder``; empty where ``/proc`` is absent."""
    folder = Path(folder).resolve()
    exclude = {os.getpid(), os.getppid()} if me is None else {me}
    holders = []
    for entry in proc.glob("[0-9]*"):
        try:
            pid = int(entry.name)
            if pid in exclude:
                continue
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            if _is_snakemake(argv) and (entry / "cwd").resolve() == folder:
                holders.append(pid)
        except (OSError, ValueError):  # gone meanwhile, or not ours to read
            continue
    return sorted(holders)


def lock_message(folder, *, proc=Path("/proc"), me: int | None = None) -> tuple[str, bool] | None:
    """``(message, another run alive)`` when ``folder/.snakemake/locks`` holds locks, else
    None: with a live holder, wait for it (never ``--unlock``); with none, the locks were left
    by a run that is gone, and ``snakemake --unlock`` is safe."""
    locks = sorted((Path(folder) / ".snakemake" / "locks").glob("*.lock"))
    if not locks:
        return None
    holders = lock_holders(folder, proc=proc, me=me)
    if holders:
        return (f"another Snakemake (pid {', '.join(map(str, holders))}) is running in this "
                f"folder and holds its lock: wait for it to finish (do not --unlock: two runs "
                f"would write the same files)", True)
    return (f"{len(locks)} lock file(s) in .snakemake/locks were left by a Snakemake that is "
            f"gone (killed?); no other run is alive on this machine, so `snakemake --unlock` is "
            f"safe (unless a run on another machine shares the folder), then run again", False)


def _stat(pid: int, proc: Path) -> tuple[str, int, str]:
    """The state (``Z``: a zombie, dead), parent pid and start time (clock ticks since boot)
    of ``pid``."""
    stat = (proc / str(pid) / "stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    return fields[0], int(fields[1]), fields[19]


def snakemake_ancestor(pid: int | None = None, *, proc=Path("/proc")) -> tuple[int, str] | None:
    """``(pid, start time)`` of the nearest ancestor of ``pid`` (default: this process) that
    runs Snakemake itself, or None (a job on a cluster node, no ``/proc``)."""
    pid = os.getpid() if pid is None else pid
    try:
        while pid > 1:
            pid = _stat(pid, proc)[1]
            argv = (proc / str(pid) / "cmdline").read_bytes().decode(errors="replace")
            if _is_snakemake(argv.split("\0")):
                return pid, _stat(pid, proc)[2]
    except (OSError, ValueError, IndexError):
        pass
    return None


def stop_with_snakemake(interval: float = 2.0, *, proc=Path("/proc")) -> threading.Thread | None:
    """End this process (``SIGTERM``) once the Snakemake that started it is gone.

    Snakemake stops its jobs when it is interrupted, but a ``kill -9`` leaves them running
    and writing into a folder the next run uses. A daemon thread checks every ``interval``
    seconds that the nearest Snakemake ancestor (:func:`snakemake_ancestor`; its start time
    guards against a reused pid) is alive. Outputs are written atomically, so a job ended
    this way leaves none half-written. Returns the thread, or None where no Snakemake
    started this process.
    """
    ancestor = snakemake_ancestor(proc=proc)
    if ancestor is None:
        return None
    pid, started = ancestor

    def watch():
        while True:
            time.sleep(interval)
            try:
                state, _, start = _stat(pid, proc)
                alive = state != "Z" and start == started
            except (OSError, ValueError, IndexError):
                alive = False
            if not alive:
                print(f"the Snakemake that started this job (pid {pid}) is gone: stopping "
                      f"the job", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGTERM)
                return

    thread = threading.Thread(target=watch, name="stop-with-snakemake", daemon=True)
    thread.start()
    return thread

"""Whether the lock on a working directory is held by a live Snakemake or left by a dead one.

Snakemake locks the files a run will write (``.snakemake/locks/``) and answers a second run
with "Directory cannot be locked ... run snakemake --unlock" whether the first still runs
(then ``--unlock`` lets two runs write the same files) or was killed (then it is what to do).
:func:`lock_holders` looks for the other Snakemake processes working in the folder (Linux's
``/proc``); :func:`lock_message` says which case it is, for the Snakefile to stop on or warn.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["lock_holders", "lock_message"]


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

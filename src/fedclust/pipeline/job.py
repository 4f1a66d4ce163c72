"""What every workflow script does around its one library call: :func:`job` sends logs,
warnings and progress to the rule's log file, limits the threads to the job's and reports an
error in one line; :func:`stop_when_orphaned` stops a job whose Snakemake is gone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
import traceback
from pathlib import Path

__all__ = ["job", "apply_threads", "stop_when_orphaned"]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def apply_threads(threads: int):
    """Limit BLAS/OpenMP pools (and torch, if imported) to ``threads``; returns the limiter
    (a ``threadpoolctl`` context to keep alive)."""
    from threadpoolctl import threadpool_limits

    threads = max(1, int(threads))
    for name in _THREAD_VARIABLES:  # for libraries loaded later and for subprocesses
        os.environ[name] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    # the kernel's own threads (fedclust.lloyd), at most those numba started with; never through
    # NUMBA_NUM_THREADS, which numba refuses to see change once its threads run
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return threadpool_limits(limits=threads)


def _wildcards(snakemake) -> str:
    """`` (name=value, ...)`` of a job's wildcards, "" without any."""
    wildcards = getattr(snakemake, "wildcards", None)
    items = list(wildcards.items()) if hasattr(wildcards, "items") else []
    return f" ({', '.join(f'{k}={v}' for k, v in items)})" if items else ""


def _duration(seconds: float) -> str:
    """``12.3 s``, ``4.2 min`` or ``1.5 h``."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def stop_when_orphaned(rule: str, log, *, interval: float = 2.0) -> threading.Thread:
    """Stop this process (status 1) once the process that started it is gone: a Snakemake
    killed with SIGKILL cannot stop its jobs, which the system then hands to another parent
    (they would run on, unseen, and hold the CPU the next run needs). Checked every
    ``interval`` seconds by a daemon thread; the outputs are written atomically, so nothing
    half-written is left, and the next run (``--rerun-incomplete``) makes the job again."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(interval)
        log.error("rule %s: the Snakemake that started it (pid %d) is gone: stopping", rule,
                  parent)
        os._exit(1)

    watcher = threading.Thread(target=watch, name="stop-when-orphaned", daemon=True)
    watcher.start()
    return watcher


@contextlib.contextmanager
def job(snakemake):
    """Run a script's body as one pipeline job. A script is thin::

        with job(snakemake) as log:
            table = some_library_function(...)
            write_table(table, snakemake.output[0])

    Sends the ``fedclust`` logger, warnings and progress to the rule's ``log:`` file (progress
    as plain periodic lines, not bar redraws), limits BLAS (and torch, if loaded) to the job's
    ``threads`` -- Snakemake sets the thread variables only for ``shell:`` rules -- and, when
    the job fails, writes the full traceback to the log and one short line naming the rule, the
    error and the log file to the terminal, so the cause is visible without opening the log. A
    job that succeeds prints one line with its time (``done coreset_setting (partition=uniform,
    ...) in 38.2 min``), so a run of hours reads as one line per finished job.

    Yields the ``fedclust`` logger. On an exception the process exits with status 1 after
    logging; Snakemake then marks the job failed and removes its outputs.
    """
    rule = getattr(snakemake, "rule", "job")
    log_path = Path(snakemake.log[0]) if len(snakemake.log) else None
    terminal = sys.stderr
    stream = None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        stream = open(log_path, "w", buffering=1)
        sys.stderr = stream  # tqdm, warnings and stray prints of libraries
    logging.basicConfig(level=logging.INFO, stream=stream or terminal, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.captureWarnings(True)
    log = logging.getLogger("fedclust")
    threads = int(getattr(snakemake, "threads", 1) or 1)
    limiter = apply_threads(threads)
    stop_when_orphaned(rule, log)
    log.info("rule %s: %d thread(s)", rule, threads)
    start = time.perf_counter()
    try:
        yield log
        print(f"done {rule}{_wildcards(snakemake)} in "
              f"{_duration(time.perf_counter() - start)}", file=terminal, flush=True)
    except BaseException as error:  # noqa: BLE001 - reported, then the job fails
        if isinstance(error, SystemExit) and error.code in (0, None):
            raise
        log.error("rule %s failed:\n%s", rule, "".join(traceback.format_exception(error)))
        where = f" (full log: {log_path})" if log_path is not None else ""
        print(f"Error in rule {rule}: {type(error).__name__}: {error}{where}", file=terminal,
              flush=True)
        raise SystemExit(1) from None
    finally:
        limiter.restore_original_limits()
        if stream is not None:
            sys.stderr = terminal
            logging.getLogger().handlers.clear()
            stream.close()

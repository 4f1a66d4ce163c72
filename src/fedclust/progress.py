"""Progress of long work: a bar on a terminal, plain periodic lines in a log file.

:func:`progress` wraps an iterable. When standard error is a terminal it is a tqdm bar; when
it is not (a Snakemake ``log:`` file, a SLURM output file, a pipe) it writes one plain line
through the ``fedclust`` logger at most every ``interval`` seconds and at the end, instead of
the bar's carriage-return redraws that fill a log with thousands of partial lines. Each line
gives the steps done, the time so far and, at the rate so far, the time left; a step that
runs long (a baseline run of minutes) gets a line ``heartbeat`` seconds (50) after the last
line saying which step is running and for how long, so that a log of a run of hours never
stays silent for more than a minute.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterable, Iterator

from tqdm.auto import tqdm

__all__ = ["progress", "Progress"]

_log = logging.getLogger("fedclust.progress")
#: Seconds of silence before a heartbeat line: under a minute with a compiled call (which holds
#: the interpreter until it returns, a few seconds at most) in flight.
_HEARTBEAT = 50.0


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Progress:
    """Periodic plain-text progress of ``total`` steps (see :func:`progress`).

    ``heartbeat`` (seconds, None for none): while a step runs longer than this, a line every
    ``heartbeat`` seconds from a background thread (it needs the GIL, which compiled kernels
    and BLAS hand back between calls). Call :meth:`close` to stop it.
    """

    def __init__(self, total: int | None, desc: str, *, interval: float = 30.0,
                 unit: str = "it", logger: logging.Logger = _log,
                 heartbeat: float | None = _HEARTBEAT):
        self.total, self.desc, self.unit = total, desc, unit
        self.interval, self.logger = interval, logger
        self.count = 0
        self.postfix = ""
        self._start = self._last = self._step_start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.heartbeat = heartbeat
        if heartbeat is not None:
            threading.Thread(target=self._beat, name=f"progress: {desc}", daemon=True).start()

    def _beat(self) -> None:
        while not self._stop.wait(self._until_due()):
            with self._lock:
                now = time.monotonic()
                if now - self._last >= self.heartbeat:
                    self._last = now
                    self._write(now, running=now - self._step_start)

    def _until_due(self) -> float:
        """Seconds until ``heartbeat`` after the last line: the heartbeat wakes then, not a
        whole ``heartbeat`` after its previous wake (which let a line from :meth:`update` in
        between stretch a silence to almost twice the heartbeat)."""
        with self._lock:
            return max(self._last + self.heartbeat - time.monotonic(), 0.0)

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.count += n
            now = self._step_start = time.monotonic()
            if now - self._last >= self.interval:
                self._last = now
                self._write(now)

    def set_postfix(self, **values) -> None:
        self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._write(time.monotonic(), done=True)

    def _write(self, now: float, done: bool = False, running: float | None = None) -> None:
        elapsed = now - self._start
        of = f"/{self.total}" if self.total is not None else ""
        pct = f" ({100 * self.count / self.total:.0f}%)" if self.total else ""
        extra = f", {self.postfix}" if self.postfix else ""
        if running is not None:
            extra += f"; step {self.count + 1} running for {running:.0f} s"
        state = "done" if done else "progress"
        self.logger.info("%s: %s %d%s %s%s in %.0f s%s%s", self.desc, state, self.count, of,
                         self.unit, pct, elapsed, self._left(elapsed, done), extra)

    def _left(self, elapsed: float, done: bool) -> str:
        """The time left at the rate so far (known once a step is done and a total given)."""
        if done or not self.total or self.count <= 0:
            return ""
        left = elapsed / self.count * max(self.total - self.count, 0)
        return f", about {left / 60:.1f} min left" if left >= 60 else f", about {left:.0f} s left"


def progress(iterable: Iterable, *, desc: str, total: int | None = None,
             disable: bool = False, unit: str = "it", interval: float = 30.0) -> Iterator:
    """Iterate over ``iterable`` showing progress (a bar on a terminal, log lines otherwise).

    Examples
    --------
    >>> from fedclust.progress import progress
    >>> sum(progress(range(5), desc="summing", disable=True))
    10
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    if disable:
        yield from iterable
        return
    if _is_terminal(sys.stderr):
        yield from tqdm(iterable, desc=desc, total=total, unit=unit, mininterval=1.0)
        return
    bar = Progress(total, desc, interval=interval, unit=unit)
    try:
        for item in iterable:
            yield item
            bar.update()
    finally:
        bar.close()


def progress_bar(*, desc: str, total: int | None = None, disable: bool = False,
                 unit: str = "it", interval: float = 30.0):
    """A manually updated bar (``update``, ``set_postfix``, ``close``): tqdm on a terminal,
    :class:`Progress` otherwise."""
    if disable:
        return tqdm(total=total, disable=True)
    if _is_terminal(sys.stderr):
        return tqdm(desc=desc, total=total, unit=unit, mininterval=1.0)
    return Progress(total, desc, interval=interval, unit=unit)

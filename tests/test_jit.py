"""The kernel cache follows the sources: a kernel calling another module's kernel is recompiled
when that module changes (numba alone keys a cached kernel on its own file); and processes
saving kernels into one cache folder at once keep every entry with its own data."""

from __future__ import annotations

import subprocess
import sys
import time

from fedclust._jit import FINGERPRINT

A = "from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + {}\n"
B = ("from numba import njit\n\nfrom .a import f\n\n@njit(cache=True)\ndef g(x):\n"
     "    return f(x) * 10\n")


def _g_of_one(root, refresh: bool) -> int:
    code = ("from pathlib import Path\n"
            + ("from fedclust._jit import refresh_cache\nrefresh_cache(Path('pk'))\n"
               if refresh else "")
            + "from pk.b import g\nprint(g(1))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, check=True)
    return int(done.stdout.split()[-1])


def _package(root):
    (root / "pk").mkdir()
    (root / "pk" / "__init__.py").write_text("")
    (root / "pk" / "a.py").write_text(A.format(1))
    (root / "pk" / "b.py").write_text(B)


def _edit_callee(root):
    (root / "pk" / "a.py").write_text(A.format(2))


def test_numba_alone_runs_a_stale_callee(tmp_path):
    """The hazard: after the callee's module changes, the cached caller still runs the old
    callee (f(1) = 3 now, g(1) should be 30)."""
    _package(tmp_path)
    assert _g_of_one(tmp_path, refresh=False) == 20
    _edit_callee(tmp_path)
    assert _g_of_one(tmp_path, refresh=False) == 20


def test_refreshed_sources_recompile_the_caller(tmp_path):
    _package(tmp_path)
    assert _g_of_one(tmp_path, refresh=True) == 20
    record = tmp_path / "pk" / "__pycache__" / FINGERPRINT
    first = record.read_text()
    assert len(first.strip()) == 64
    # unchanged sources: the cache is used as it is
    index = next((tmp_path / "pk" / "__pycache__").glob("b.g-*.nbi"))
    date = index.stat().st_mtime_ns
    assert _g_of_one(tmp_path, refresh=True) == 20
    assert index.stat().st_mtime_ns == date
    _edit_callee(tmp_path)
    assert _g_of_one(tmp_path, refresh=True) == 30
    assert record.read_text() != first


#: Saves ``n`` entries (key "<who>-<i>", data the same) into one cache folder's index ``kern``,
#: starting at a given time, with the package's numba (``fedclust._jit`` imported).
SAVES = """
import sys, time
import fedclust._jit
from numba.core.caching import IndexDataCacheFile
who, n, folder, start = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
cache = IndexDataCacheFile(folder, "kern", source_stamp=(1.0, 10))
while time.time() < start:
    pass
for i in range(n):
    cache.save(f"{who}-{i}", f"{who}-{i}")
"""


def _save_together(folder, n: int = 150) -> dict:
    from numba.core.caching import IndexDataCacheFile

    folder.mkdir()
    start = str(time.time() + 3.0)  # both processes started and imported by then
    writers = [subprocess.Popen([sys.executable, "-c", SAVES, who, str(n), str(folder), start])
               for who in "AB"]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    cache = IndexDataCacheFile(str(folder), "kern", source_stamp=(1.0, 10))
    return {key: cache.load(key) for key in cache._load_index()}


def test_kernels_saved_at_once_keep_every_entry_and_its_own_data(tmp_path):
    # without the lock (numba alone) two such writers kept 169 of 200 entries, 5 of them
    # holding the other key's data (2 cores, 2026-11-29)
    saved = _save_together(tmp_path / "locked")
    assert len(saved) == 300
    assert all(key == data for key, data in saved.items())

"""numba's ``njit`` and ``prange``, with the package's kernel cache kept in step with its sources.

numba keys a cached kernel on the contents of the kernel's own file only. A kernel that calls
a kernel of another module keeps the callee's old machine code after that module changes (a
cached k-FED step would go on running yesterday's Lloyd pass, without a word). Every module
that compiles kernels takes ``njit`` from here; on the first import, :func:`refresh_cache`
compares a fingerprint of all of them with the one their cache was built against and, when it
differs, removes their cached kernels, so that numba compiles each again once. It also makes
numba's cache safe for processes that compile into one folder at once (a pipeline's parallel
jobs, the test workers): numba numbers a new kernel's data file by reading the index and
writes the index back, so two processes saving together lose entries and can map a kernel to
the other's machine code; :func:`serialize_cache_writes` holds a lock on the folder while
each save reads and writes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

from numba import njit, prange

__all__ = ["njit", "prange", "refresh_cache", "serialize_cache_writes"]

#: The file, in each cache folder, naming the sources its kernels were compiled from.
FINGERPRINT = "numba-sources.sha256"
#: The file, in each cache folder, that a process locks while it saves a kernel there.
LOCK = "numba-cache.lock"


def _cache_folder(source: Path) -> Path | None:
    """Where numba caches the kernels of ``source`` (its own choice of locator: the
    ``NUMBA_CACHE_DIR`` folder, the ``__pycache__`` beside the file, the user's cache)."""
    from numba.core.caching import CacheImpl

    def probe():  # the locators read a function's first line only
        pass

    for locator_class in CacheImpl._locator_classes:
        locator = locator_class.from_function(probe, str(source))
        if locator is not None:
            return Path(locator.get_cache_path())
    return None


def refresh_cache(package: Path, marker: str = "njit") -> list[Path]:
    """Remove the cached kernels of every source file of ``package`` that mentions ``marker``
    when their contents changed since the cache was built (a fingerprint of all of them in
    each cache folder).

    Returns
    -------
    list of Path
        The cache files removed (none when the fingerprint matches, or where the cache cannot
        be written).
    """
    package = Path(package)
    sources = sorted(p for p in package.rglob("*.py")
                     if "__pycache__" not in p.parts and marker in p.read_text())
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    fingerprint = digest.hexdigest() + "\n"
    folders: dict[Path, list[Path]] = {}
    for path in sources:
        folder = _cache_folder(path)
        if folder is not None:
            folders.setdefault(folder, []).append(path)
    removed = []
    for folder, paths in folders.items():
        record = folder / FINGERPRINT
        try:
            if record.is_file() and record.read_text() == fingerprint:
                continue
            for path in paths:
                for cached in [*folder.glob(f"{path.stem}.*.nbi"),
                               *folder.glob(f"{path.stem}.*.nbc")]:
                    cached.unlink(missing_ok=True)
                    removed.append(cached)
            temporary = folder / f".{FINGERPRINT}.{os.getpid()}"
            temporary.write_text(fingerprint)
            os.replace(temporary, record)
        except OSError:  # a read-only cache: numba does not write there either
            continue
    return removed


@contextlib.contextmanager
def _folder_lock(folder: str):
    """An exclusive lock on ``folder``'s :data:`LOCK` file, held by this process (none where
    there is no ``fcntl``, the folder cannot be written, or its file system has no locks)."""
    handle = None
    try:
        import fcntl
        handle = open(os.path.join(folder, LOCK), "a")
        fcntl.flock(handle, fcntl.LOCK_EX)
    except (ImportError, OSError):  # then save as numba alone does
        if handle is not None:
            handle.close()
            handle = None
    try:
        yield
    finally:
        if handle is not None:
            handle.close()  # closing the file releases its lock


def serialize_cache_writes() -> None:
    """Make each save into numba's on-disk cache (read the index, pick the data file's
    number, write both) hold :func:`_folder_lock` on its folder, so that processes saving
    into one folder at once keep every entry and each entry's own data."""
    from numba.core.caching import IndexDataCacheFile

    save = IndexDataCacheFile.save
    if getattr(save, "_fedclust_locked", False):
        return

    @functools.wraps(save)
    def locked_save(self, key, data):
        with _folder_lock(self._cache_path):
            save(self, key, data)

    locked_save._fedclust_locked = True
    IndexDataCacheFile.save = locked_save


serialize_cache_writes()
refresh_cache(Path(__file__).resolve().parent)

"""Fetch a public data file from its official URL or from an offline mirror, verified either way.

Every data set module describes its files as :class:`RemoteFile` records: official URLs and the
published checksums. :func:`fetch` copies the file from ``mirror`` when one is given (a folder
laid out like the upstream sources, e.g. ``../shared/data``) and downloads it otherwise; in both
cases the bytes are checked against the same md5/sha256 before the file appears at its final
path, so nothing half-written or corrupt is ever left behind.
"""

from __future__ import annotations

import hashlib
import shutil
import tarfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..io import atomic_path
from ..progress import progress_bar

__all__ = ["RemoteFile", "fetch", "verify_file", "extract_members",
           "ChecksumError", "DataUnavailableError"]

_CHUNK = 1 << 20


class ChecksumError(ValueError):
    """A file's bytes do not match its published checksum."""


class DataUnavailableError(RuntimeError):
    """A file could be neither downloaded nor found in the mirror."""


@dataclass(frozen=True)
class RemoteFile:
    """A file of a public data set.

    Attributes
    ----------
    name : str
        File name on disk.
    urls : tuple of str
        Official download URLs, tried in order.
    mirror_path : str
        Path of the same file relative to a mirror's root folder.
    md5, sha256 : str or None
        Published checksums.
    check : callable, optional
        ``check(path, label)`` validates the file's content and raises ``ValueError`` naming
        ``label`` when it is not the expected file. Only for files whose publisher gives no
        checksum; a file needs a checksum or a check.
    """

    name: str
    urls: tuple[str, ...]
    mirror_path: str
    md5: str | None = None
    sha256: str | None = None
    check: Callable[[Path, str], None] | None = None

    def __post_init__(self):
        if not (self.md5 or self.sha256 or self.check):
            raise ValueError(f"RemoteFile {self.name!r} needs an md5 or a sha256 checksum "
                             f"(or, where none is published, a content check)")

    def verify(self, path: Path, label: str) -> None:
        """Raise unless ``path`` matches the checksums and passes the content check."""
        verify_file(path, md5=self.md5, sha256=self.sha256, label=label)
        if self.check is not None:
            self.check(path, label)


def _digests(path, algorithms=("md5", "sha256")) -> dict[str, str]:
    """Hex digests of the file at ``path``, read once in chunks, one per algorithm."""
    hashes = {name: hashlib.new(name) for name in algorithms}
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            for h in hashes.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashes.items()}


def verify_file(path, *, md5: str | None = None, sha256: str | None = None,
                label: str | None = None) -> None:
    """Raise :class:`ChecksumError` naming ``path`` (or ``label``) unless its checksums match."""
    path = Path(path)
    got = _digests(path)
    for algo, expected in (("md5", md5), ("sha256", sha256)):
        if expected and got[algo] != expected.lower():
            raise ChecksumError(
                f"{algo} mismatch for {label or path}: expected {expected}, got {got[algo]} "
                f"(file {path}); the file is corrupt or not the published version"
            )


def _download(url: str, target: Path, label: str, progress: bool) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "fedclust"})
    with urllib.request.urlopen(request, timeout=60) as response, open(target, "wb") as out:
        total = int(response.headers.get("Content-Length") or 0) or None
        bar = progress_bar(desc=f"downloading {label}", total=total, unit="B",
                           disable=not progress)
        for chunk in iter(lambda: response.read(_CHUNK), b""):
            out.write(chunk)
            bar.update(len(chunk))
        bar.close()


def fetch(remote: RemoteFile, dest_dir, *, mirror=None, progress: bool = True) -> Path:
    """Put a verified copy of ``remote`` at ``dest_dir / remote.name`` and return that path.

    Parameters
    ----------
    remote : RemoteFile
    dest_dir : path-like
    mirror : path-like, optional
        Root of an offline mirror; the file is read from ``mirror / remote.mirror_path``
        instead of the network.
    progress : bool
        Show a progress bar while downloading.

    Raises
    ------
    DataUnavailableError
        The mirror lacks the file, or every URL failed (offline without a mirror).
    ChecksumError
        The bytes obtained do not match the published checksum.
    ValueError
        The file fails ``remote.check`` (files published without a checksum).
    """
    dest_dir = Path(dest_dir)
    dest = dest_dir / remote.name
    if dest.exists():
        remote.verify(dest, remote.name)
        return dest
    with atomic_path(dest, suffix=".part") as tmp:
        if mirror is not None:
            source = Path(mirror) / remote.mirror_path
            if not source.is_file():
                raise DataUnavailableError(
                    f"{remote.name}: not found in the data mirror at {source} "
                    f"(data_mirror={mirror})"
                )
            shutil.copyfile(source, tmp)
            label = f"{remote.name} (from mirror {source})"
        else:
            errors = []
            for url in remote.urls:
                try:
                    _download(url, tmp, remote.name, progress)
                    break
                except (urllib.error.URLError, OSError, TimeoutError) as exc:
                    errors.append(f"{url}: {exc}")
            else:
                raise DataUnavailableError(
                    f"could not download {remote.name} ({'; '.join(errors)}). Without internet, "
                    f"point data_mirror at a folder holding {remote.mirror_path}, e.g. "
                    f"`snakemake --config data_mirror=../shared/data`"
                )
            label = remote.name
        remote.verify(tmp, label)
    return dest


def _safe_members(archive: Path, tar: tarfile.TarFile, error) -> list[tarfile.TarInfo]:
    """All members of ``tar``, refusing absolute paths, ``..``, links and special files."""
    members = tar.getmembers()
    for member in members:
        name = PurePosixPath(member.name)
        if name.is_absolute() or ".." in name.parts or "\\" in member.name:
            raise error(f"{archive}: refusing to extract {member.name!r}: its path leaves the "
                        f"target folder")
        if not (member.isfile() or member.isdir()):
            raise error(f"{archive}: refusing to extract {member.name!r}: not a regular file or "
                        f"folder (links are not expected here)")
    return members


def extract_members(archive, dest, names, *, error: type[Exception] = ValueError,
                    verify: Callable[[Path, str, str], None] | None = None) -> list[Path]:
    """Extract the members called ``names`` (at any depth) of a tar archive into ``dest``.

    Nothing is extracted if any member of the archive could leave ``dest`` (absolute path,
    ``..``) or is a link or special file. Each member is written under its base name only,
    through a temporary file that ``verify(tmp_path, name, label)`` may check, then renamed
    into place.

    Raises
    ------
    error
        The archive is unreadable, unsafe, or does not hold exactly one member of each name;
        the message names the archive and the member.
    """
    archive, dest = Path(archive), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise error(f"{archive}: not a readable tar archive ({exc})") from exc
    written = []
    with tar:
        members = _safe_members(archive, tar, error)
        for name in names:
            hits = [m for m in members if m.isfile() and PurePosixPath(m.name).name == name]
            if len(hits) != 1:
                raise error(f"{archive}: expected one member named {name!r}, found {len(hits)} "
                            f"(members: {[m.name for m in members][:10]})")
            with atomic_path(dest / name, suffix=".part") as tmp:
                with open(tmp, "wb") as out, tar.extractfile(hits[0]) as src:
                    shutil.copyfileobj(src, out, _CHUNK)
                if verify is not None:
                    verify(tmp, name, f"{name} (member {hits[0].name!r} of {archive})")
            written.append(dest / name)
    return written

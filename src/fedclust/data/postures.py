"""UCI Motion Capture Hand Postures (Gardner et al., 2014; UCI data set 405).

Five hand postures of 12 users, 38 columns of unlabeled glove markers with ``?`` where a
marker was not seen. :func:`fetch_postures_uci` fetches UCI's archive (verified by content: UCI
publishes no checksum) and the offline mirror holds a real subset (:data:`POSTURES_SUBSET`);
:func:`postures_features` drops the class and user columns and the markers missing too often
and imputes the rest. The sources and the features: ``docs/data.md`` (Hand Postures).
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from ..io import atomic_path
from .download import RemoteFile, fetch

__all__ = ["POSTURES_CSV", "POSTURES_SUBSET", "POSTURES_UCI", "POSTURES_UCI_URL", "PosturesData",
           "fetch_postures_subset", "fetch_postures_uci", "load_postures", "postures_features",
           "postures_csv_from_archive"]

POSTURES_UCI_URL = "https://archive.ics.uci.edu/static/public/405/motion+capture+hand+postures.zip"
POSTURES_CLASSES = (1, 2, 3, 4, 5)  # fist, stop, point1, point2, grab

# mirror-only: a third-party subset of the UCI file (classes 1-3, users 0-2), verified by sha256
POSTURES_SUBSET = RemoteFile(
    name="Postures.subset_classes1-3_users0-2.csv",
    urls=(),
    mirror_path="postures/Postures.subset_classes1-3_users0-2.csv",
    sha256="01ed737337d46e62852bc91485b4fed81cc0333dcaa33152da96878a26b118ab",
)

_MARKER_COLUMNS = [f"{axis}{i}" for i in range(12) for axis in "XYZ"]
#: The CSV inside UCI's archive (and the name it is fetched to).
POSTURES_CSV = "Postures.csv"
_COLUMNS = ["Class", "User", *_MARKER_COLUMNS]


@dataclass
class PosturesData:
    """Rows of the Postures file: ``markers`` (n, 36) with NaN where missing, ``posture`` and
    ``user`` (n,) ints, and the file they came from."""

    markers: pd.DataFrame
    posture: np.ndarray
    user: np.ndarray
    path: str


def _members_named(archive: zipfile.ZipFile, name: str, where: str) -> list[tuple[str, bytes]]:
    """``(path, bytes)`` of every member called ``name`` in ``archive``, looking one level into
    nested zip files (UCI's archives sometimes wrap the data set's own zip)."""
    hits = []
    for info in archive.infolist():
        base = PurePosixPath(info.filename).name
        if info.is_dir():
            continue
        if base == name:
            hits.append((f"{where}:{info.filename}", archive.read(info)))
        elif base.lower().endswith(".zip"):
            try:
                inner = zipfile.ZipFile(io.BytesIO(archive.read(info)))
            except zipfile.BadZipFile:
                continue
            with inner:
                hits += [(f"{where}:{info.filename}:{n.filename}", inner.read(n))
                         for n in inner.infolist()
                         if not n.is_dir() and PurePosixPath(n.filename).name == name]
    return hits


def postures_csv_from_archive(archive, label: str | None = None) -> bytes:
    """The bytes of the one ``Postures.csv`` inside UCI's zip ``archive``.

    Raises ``ValueError`` naming the archive (or ``label``) when it is not a zip file or does
    not hold exactly one ``Postures.csv``.
    """
    label = label or str(archive)
    try:
        with zipfile.ZipFile(archive) as zf:
            hits = _members_named(zf, POSTURES_CSV, Path(archive).name)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{label}: not a readable zip archive ({exc})") from exc
    if len(hits) != 1:
        found = ", ".join(h[0] for h in hits) or "none"
        raise ValueError(f"{label}: expected exactly one {POSTURES_CSV} in the UCI archive; "
                         f"found {found}")
    return hits[0][1]


def _check_uci_archive(path: Path, label: str) -> None:
    """Content check standing in for the checksum UCI does not publish (see module doc)."""
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / POSTURES_CSV
        csv.write_bytes(postures_csv_from_archive(path, label))
        try:
            data = load_postures(csv)
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}") from exc
    unknown = sorted(set(np.unique(data.posture).tolist()) - set(POSTURES_CLASSES))
    if unknown:
        raise ValueError(f"{label}: {POSTURES_CSV} holds posture classes {unknown} outside "
                         f"{list(POSTURES_CLASSES)}; not the UCI Postures data")


# UCI data set 405; no published checksum, so the content check above verifies it
POSTURES_UCI = RemoteFile(
    name="motion+capture+hand+postures.zip",
    urls=(POSTURES_UCI_URL,),
    mirror_path="postures/motion+capture+hand+postures.zip",
    check=_check_uci_archive,
)


def fetch_postures_uci(root, *, mirror=None, progress: bool = True) -> Path:
    """Fetch UCI's Postures archive (verified by content) and put its ``Postures.csv`` at
    ``root / "Postures.csv"``; returns that path."""
    root = Path(root)
    archive = fetch(POSTURES_UCI, root, mirror=mirror, progress=progress)
    dest = root / POSTURES_CSV
    with atomic_path(dest) as tmp:
        tmp.write_bytes(postures_csv_from_archive(archive))
    return dest


def fetch_postures_subset(root, *, mirror) -> Path:
    """Copy the mirror's verified subset into ``root`` (there is no download URL for it)."""
    if mirror is None:
        raise ValueError(
            "the Postures subset exists only in the offline mirror: set data_mirror, or give "
            "the path of the official Postures.csv (UCI data set 405), or source: uci to "
            "download it"
        )
    return fetch(POSTURES_SUBSET, root, mirror=mirror)


def load_postures(path) -> PosturesData:
    """Read a Postures CSV (official or subset), validating its layout.

    Raises ``ValueError`` naming the file when the header differs from the UCI layout or a
    value is neither a number nor ``?``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Postures file missing: {path}")
    try:
        frame = pd.read_csv(path, na_values="?", keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable CSV ({exc})") from exc
    if list(frame.columns) != _COLUMNS:
        raise ValueError(f"{path}: header is not the UCI Postures layout "
                         f"(Class, User, X0, Y0, Z0, ..., Z11); got {list(frame.columns)[:6]}...")
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            bad = frame[column][pd.to_numeric(frame[column], errors="coerce").isna()
                                & frame[column].notna()]
            raise ValueError(f"{path}: column {column} holds non-numeric value "
                             f"{bad.iloc[0]!r} (row {bad.index[0] + 2})")
    # the official file's first data row is a placeholder of zeros
    placeholder = (frame.fillna(0) == 0).all(axis=1)
    frame = frame[~placeholder].reset_index(drop=True)
    if frame[["Class", "User"]].isna().any().any():
        raise ValueError(f"{path}: Class or User missing in some rows")
    return PosturesData(markers=frame[_MARKER_COLUMNS].astype(float),
                        posture=frame["Class"].to_numpy(dtype=np.int64),
                        user=frame["User"].to_numpy(dtype=np.int64), path=str(path))


def postures_features(data: PosturesData, *, max_missing: float = 0.5,
                      standardize: bool = False, columns: str = "markers"):
    """Feature matrix of the markers (see the module docstring).

    ``columns="markers"`` keeps the marker coordinates missing in at most ``max_missing`` of the
    rows; ``"all"`` keeps every column of the CSV -- ``Class``, ``User`` and the 36 coordinates,
    the ``d = 38`` of the LocalKMeans paper's App. B.1, Table 1 (reconstructed: 38 is the CSV's
    column count; the class label is then a feature). Missing values are imputed with the
    column mean either way.

    Returns
    -------
    X : ndarray of shape (n, n_kept_columns), float32
    columns : list of str
        The columns kept.
    """
    if not 0.0 <= max_missing < 1.0:
        raise ValueError(f"max_missing must be in [0, 1); got {max_missing}")
    if columns not in ("markers", "all"):
        raise ValueError(f"columns must be 'markers' or 'all'; got {columns!r}")
    if columns == "all":
        frame = data.markers.copy()
        frame.insert(0, "User", data.user)
        frame.insert(0, "Class", data.posture)
        values = frame.fillna(frame.mean())
        X = values.to_numpy(dtype=np.float64)
        if standardize:
            X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        return X.astype(np.float32), list(frame.columns)
    share = data.markers.isna().mean()
    kept = [c for c in data.markers.columns if share[c] <= max_missing]
    if not kept:
        raise ValueError(f"{data.path}: no marker column has at most {max_missing:.0%} missing")
    values = data.markers[kept]
    values = values.fillna(values.mean())
    X = values.to_numpy(dtype=np.float64)
    if standardize:
        X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return X.astype(np.float32), kept

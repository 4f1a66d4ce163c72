"""UCI YearPredictionMSD (Bertin-Mahieux et al., 2011; UCI data set 203), the data set Balcan,
Ehrlich & Liang (NeurIPS 2013, Sec. 5) cluster: 515,345 songs, each a row ``year, f1, ...,
f90`` (the release year, kept as the row's label, and 90 timbre features). UCI publishes no
checksum, so :func:`fetch_year_prediction` verifies the archive by content and
:func:`load_year_prediction` reads it. The layout, the checks and where the file comes from:
docs/data.md, *YearPredictionMSD*.
"""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from .download import RemoteFile, fetch

__all__ = ["YEAR_PREDICTION", "YEAR_ROWS", "YEAR_FEATURES", "fetch_year_prediction",
           "load_year_prediction"]

#: Rows and features of the official file (UCI's description of data set 203).
YEAR_ROWS = 515_345
YEAR_FEATURES = 90
_YEARS = (1922, 2011)
_TXT = "YearPredictionMSD.txt"


def _member(archive: zipfile.ZipFile, label: str) -> zipfile.ZipInfo:
    hits = [info for info in archive.infolist()
            if not info.is_dir() and PurePosixPath(info.filename).name == _TXT]
    if len(hits) != 1:
        found = ", ".join(h.filename for h in hits) or "none"
        raise ValueError(f"{label}: expected exactly one {_TXT} in the archive; found {found}")
    return hits[0]


def load_year_prediction(path, *, expected_rows: int | None = YEAR_ROWS):
    """Features and years of YearPredictionMSD, from the zip archive or the text file.

    Parameters
    ----------
    path : path-like
        ``YearPredictionMSD.txt.zip`` (as UCI serves it) or the extracted ``.txt``.
    expected_rows : int or None
        Rows the file must hold (the official count; None accepts any).

    Returns
    -------
    X : ndarray of shape (n, 90), float32
    year : ndarray of shape (n,), int64

    Raises
    ------
    ValueError
        Naming the file: not the layout above, a non-numeric value, a year outside
        1922-2011, or not ``expected_rows`` rows.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"YearPredictionMSD file missing: {path}")
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive, \
                    archive.open(_member(archive, str(path))) as text:
                frame = pd.read_csv(text, header=None, dtype=np.float64)
        else:
            frame = pd.read_csv(path, header=None, dtype=np.float64)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        if str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{path}: not the YearPredictionMSD layout (91 comma-separated "
                         f"numbers per row: {exc})") from exc
    if frame.shape[1] != YEAR_FEATURES + 1:
        raise ValueError(f"{path}: rows have {frame.shape[1]} columns; YearPredictionMSD has "
                         f"{YEAR_FEATURES + 1} (the year and {YEAR_FEATURES} features)")
    if expected_rows is not None and len(frame) != expected_rows:
        raise ValueError(f"{path}: {len(frame):,} rows; the UCI file has {expected_rows:,}")
    values = frame.to_numpy()
    if not np.isfinite(values).all():
        raise ValueError(f"{path}: holds missing or infinite values")
    year = values[:, 0]
    outside = (year < _YEARS[0]) | (year > _YEARS[1]) | (year != np.round(year))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{path}: row {row + 1} has year {year[row]:g}, outside "
                         f"{_YEARS[0]}-{_YEARS[1]}; not the YearPredictionMSD data")
    return values[:, 1:].astype(np.float32), year.astype(np.int64)


def _check_archive(path: Path, label: str) -> None:
    """Content check standing in for the checksum UCI does not publish."""
    try:
        load_year_prediction(path, expected_rows=YEAR_ROWS)
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from exc


# UCI data set 203 (its old and its current address); no published checksum: content check
YEAR_PREDICTION = RemoteFile(
    name="YearPredictionMSD.txt.zip",
    urls=("https://archive.ics.uci.edu/ml/machine-learning-databases/00203/"
          "YearPredictionMSD.txt.zip",
          "https://archive.ics.uci.edu/static/public/203/yearpredictionmsd.zip"),
    mirror_path="year_prediction_msd/YearPredictionMSD.txt.zip",
    check=_check_archive,
)


def fetch_year_prediction(root, *, mirror=None, progress: bool = True) -> Path:
    """Fetch UCI's archive (verified by content) into ``root``; returns its path."""
    return fetch(YEAR_PREDICTION, root, mirror=mirror, progress=progress)

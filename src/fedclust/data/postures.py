"""UCI Motion Capture Hand Postures (Gardner et al., 2014; UCI data set 405).

Five hand postures of 12 users recorded with a Vicon system and unlabeled markers on a glove:
38 columns ``Class, User, X0, Y0, Z0, ..., X11, Y11, Z11``, ``?`` where a marker was not seen
(missing values are common: records see 3 to 12 markers). The official file ``Postures.csv``
(78,095 rows, in https://archive.ics.uci.edu/static/public/405/motion+capture+hand+postures.zip)
starts with a placeholder row of zeros, which :func:`load_postures` drops.

Sources. UCI publishes no checksum for its archive, so this module does not download it: point
:func:`load_postures` at a ``Postures.csv`` you obtained (its header and values are validated).
The offline mirror holds a real subset (classes 1-3 of users 0-2, 11,022 rows) whose sha256 is
recorded in :data:`POSTURES_SUBSET`; results computed on it are labelled as the subset.

Features for clustering (:func:`postures_features`): ``Class`` and ``User`` are dropped; marker
columns missing in more than ``max_missing`` of the rows are dropped; the remaining missing
values are imputed with their column means. Markers are unlabeled, so a column is "the i-th
marker recorded", not a fixed finger: a coarse but standard representation of this data set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .download import RemoteFile, fetch

__all__ = ["POSTURES_SUBSET", "POSTURES_UCI_URL", "PosturesData", "fetch_postures_subset",
           "load_postures", "postures_features"]

POSTURES_UCI_URL = "https://archive.ics.uci.edu/static/public/405/motion+capture+hand+postures.zip"

# mirror-only: a third-party subset of the UCI file (classes 1-3, users 0-2), verified by sha256
POSTURES_SUBSET = RemoteFile(
    name="Postures.subset_classes1-3_users0-2.csv",
    urls=(),
    mirror_path="postures/Postures.subset_classes1-3_users0-2.csv",
    sha256="01ed737337d46e62852bc91485b4fed81cc0333dcaa33152da96878a26b118ab",
)

_MARKER_COLUMNS = [f"{axis}{i}" for i in range(12) for axis in "XYZ"]
_COLUMNS = ["Class", "User", *_MARKER_COLUMNS]


@dataclass
class PosturesData:
    """Rows of the Postures file: ``markers`` (n, 36) with NaN where missing, ``posture`` and
    ``user`` (n,) ints, and the file they came from."""

    markers: pd.DataFrame
    posture: np.ndarray
    user: np.ndarray
    path: str


def fetch_postures_subset(root, *, mirror) -> Path:
    """Copy the mirror's verified subset into ``root`` (there is no download URL for it)."""
    if mirror is None:
        raise ValueError(
            "the Postures subset exists only in the offline mirror: set data_mirror, or give "
            "the path of the official Postures.csv (UCI data set 405) instead"
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
                      standardize: bool = False):
    """Feature matrix of the markers (see the module docstring).

    Returns
    -------
    X : ndarray of shape (n, n_kept_columns), float32
    columns : list of str
        The marker columns kept.
    """
    if not 0.0 <= max_missing < 1.0:
        raise ValueError(f"max_missing must be in [0, 1); got {max_missing}")
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

"""Writing results: tidy tables, atomically.

A result table is tidy: one row per run and metric, with the run's parameters as columns and
the two columns ``metric`` and ``value`` last. Files are written to a temporary name in the
target folder and renamed into place, so a failed job never leaves a half-written output.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

__all__ = ["atomic_path", "write_table", "read_table", "tidy", "log_to_file", "TIDY_COLUMNS"]

TIDY_COLUMNS = ("metric", "value")


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path``; rename it onto ``path`` if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_table(df: pd.DataFrame, path) -> None:
    """Write ``df`` as CSV atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def read_table(path, *, required=()) -> pd.DataFrame:
    """Read a CSV result table, checking that the ``required`` columns are present."""
    df = pd.read_csv(path)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; has {list(df.columns)}")
    return df


def tidy(records: list[dict], id_columns) -> pd.DataFrame:
    """Turn per-run records ``{param..., metric_a: x, metric_b: y}`` into tidy rows.

    ``id_columns`` are kept as columns; every other key becomes a ``(metric, value)`` row.
    """
    wide = pd.DataFrame.from_records(records)
    id_columns = list(id_columns)
    long = wide.melt(id_vars=id_columns, var_name="metric", value_name="value")
    return long.sort_values(id_columns + ["metric"], kind="stable").reset_index(drop=True)


def log_to_file(path) -> logging.Logger:
    """Send the ``fedclust`` logger and warnings to ``path`` (a Snakemake ``log:`` file).

    Progress bars (tqdm writes to stderr) are redirected there too.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "w", buffering=1)
    sys.stderr = stream
    logging.basicConfig(level=logging.INFO, stream=stream, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.captureWarnings(True)
    return logging.getLogger("fedclust")

"""Shared figure style and saving."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator,
    LogFormatterSciNotation,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from ..io import atomic_path  # noqa: E402

__all__ = ["new_figure", "save_figure", "dataset_title", "integer_ticks", "plt"]

_RC = {
    "figure.dpi": 110,
    "savefig.dpi": 200,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # ratios near 1 (cost / phi*) read better as 1.0004 than as "+1" and 0.0004
    "axes.formatter.useoffset": False,
}


def dataset_title(runs, key: str) -> str:
    """How a figure names data set ``key`` of the table ``runs``: its ``data_title`` column
    (written by the preparation, which knows the source used), else the registry's title."""
    from ..vocabulary import title_of

    if "data_title" in runs.columns and "dataset" in runs.columns:
        titles = runs.loc[runs["dataset"] == key, "data_title"].dropna().unique()
        if len(titles):
            return str(titles[0])
    return title_of(key)


def integer_ticks(axis) -> None:
    """Put ticks on whole numbers only (iterations, counts)."""
    axis.set_major_locator(MaxNLocator(integer=True))


def log_ticks(axis) -> None:
    """Label a log axis, once its data are drawn, at 1, 2 and 5 times the powers of ten inside
    its view (``2x10^7``; 1, 2, 3 and 5 when that gives fewer than two), other ticks
    unlabelled: an axis spanning less than a decade still gets labels, and none overlap
    (matplotlib labels every minor tick of a short log axis, ``3x10^7`` running into
    ``4x10^7``)."""
    low, high = sorted(axis.get_view_interval())
    if high >= 100 * low:  # two decades or more: matplotlib labels the powers of ten
        return
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    # the fewest mantissas that still label two ticks (an axis of less than a decade)
    for mantissas in ((1, 2, 5), (1, 2, 3, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [m * 10.0 ** e for e in decades for m in mantissas
                 if low <= m * 10.0 ** e <= high]
        if len(ticks) >= 2:
            break
    else:  # narrower than from one digit to the next: matplotlib's own labels
        return
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False,
                                                     minor_thresholds=(np.inf, np.inf)))
    axis.set_minor_locator(LogLocator(base=10, subs="all"))
    axis.set_minor_formatter(NullFormatter())


def new_figure(ncols: int = 1, nrows: int = 1, *, width: float = 3.4, height: float = 2.7):
    """A figure of ``nrows x ncols`` panels, each ``width x height`` inches, in the house style."""
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                                 squeeze=False, layout="constrained")
    for ax in axes.flat:
        for key, value in _RC.items():
            if key.startswith("axes.grid"):
                ax.grid(value, alpha=_RC["grid.alpha"])
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
    return fig, axes


#: Metadata that would make two saves of one figure differ, per format: a PDF's creation
#: date (matplotlib writes the clock's, or ``SOURCE_DATE_EPOCH``'s when set) is left out, so
#: outputs are byte-reproducible.
_STABLE_METADATA = {"pdf": {"CreationDate": None}}


def save_figure(fig, *paths) -> None:
    """Save ``fig`` to every path (format from the suffix, e.g. .png and .pdf), atomically;
    the same figure gives the same bytes every time (no creation date)."""
    for path in paths:
        path = Path(path)
        fmt = path.suffix.lstrip(".")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, bbox_inches="tight",
                        metadata=_STABLE_METADATA.get(fmt))
    plt.close(fig)

"""Shared figure style and saving."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

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

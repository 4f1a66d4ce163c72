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

__all__ = ["new_figure", "save_figure", "dataset_title", "integer_ticks", "layout_problems",
           "panel_legend", "figure_legend", "plt", "MIN_LEGEND_POINTS"]

#: The smallest legend text a figure may use (points): smaller does not read in print.
MIN_LEGEND_POINTS = 8.0

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


def panel_legend(ax, **options):
    """The panel's legend right of its data, outside the axes (constrained layout makes room),
    in the house legend size: it never covers a curve."""
    return ax.legend(**{"loc": "upper left", "bbox_to_anchor": (1.02, 1.0),
                        "borderaxespad": 0.0, "frameon": False,
                        "fontsize": MIN_LEGEND_POINTS, **options})


def figure_legend(fig, axes, *, ncols: int = 5, **options):
    """One legend for every panel of ``fig`` below them, each label once (in the order the
    panels first draw it), in the house legend size; ``None`` when nothing is labelled."""
    handles, labels = {}, []
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in handles:
                handles[label] = handle
                labels.append(label)
    if not labels:
        return None
    return fig.legend([handles[label] for label in labels], labels,
                      **{"loc": "outside lower center", "ncols": min(ncols, len(labels)),
                         "frameon": False, "fontsize": MIN_LEGEND_POINTS, **options})


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


def _visible_tick_labels(axis, renderer) -> list:
    """The bounding boxes of the tick labels ``axis`` draws (inside its view, with text)."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    boxes = []
    for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks()),
                        (axis.get_minorticklocs(), axis.get_minor_ticks())):
        for loc, tick in zip(locs, ticks, strict=False):
            label = tick.label1
            if low - span <= loc <= high + span and label.get_visible() and label.get_text():
                boxes.append((label.get_text(), label.get_window_extent(renderer)))
    return boxes


def _overlap(a, b, slack: float = 1.0) -> bool:
    """Two display boxes share more than ``slack`` pixels each way."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > slack
            and min(a.y1, b.y1) - max(a.y0, b.y0) > slack)


def _data_points(ax) -> np.ndarray:
    """Display coordinates of every drawn point of ``ax``: its lines' vertices and the
    midpoints between them, and its markers' centres."""
    points = []
    for line in ax.lines:
        if not line.get_visible():
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1:
            xy = np.vstack([xy, (xy[1:] + xy[:-1]) / 2])
        if len(xy):
            points.append(line.get_transform().transform(xy))
    for collection in ax.collections:
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        if collection.get_visible() and offsets.ndim == 2 and len(offsets) > 1:
            points.append(collection.get_offset_transform().transform(offsets))
    return np.vstack(points) if points else np.empty((0, 2))


def layout_problems(fig) -> list[str]:
    """What does not read in a drawn figure, one line each: tick labels or panel titles that
    overlap, legend text under :data:`MIN_LEGEND_POINTS` or whose entries overlap, a legend
    drawn over data points (its own panel's, or any panel's for a figure legend). Empty when
    it reads well."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for i, ax in enumerate(fig.axes):
        panel = ax.get_title() or f"panel {i + 1}"
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            boxes = _visible_tick_labels(axis, renderer)
            for (ta, a), (tb, b) in zip(boxes, boxes[1:], strict=False):
                if _overlap(a, b):
                    problems.append(f"{panel}: {name} tick labels {ta!r} and {tb!r} overlap")
    titles = [(t.get_text(), t.get_window_extent(renderer)) for ax in fig.axes
              for t in (ax.title, ax._left_title, ax._right_title)  # noqa: SLF001
              if t.get_visible() and t.get_text()]
    for j, (ta, a) in enumerate(titles):
        for tb, b in titles[j + 1:]:
            if _overlap(a, b, slack=0.0):
                problems.append(f"titles {ta!r} and {tb!r} overlap")
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(legend, list(fig.axes)) for legend in fig.legends]
    for legend, under in legends:
        if not legend.get_visible():
            continue
        texts = [t for t in legend.get_texts() if t.get_text()]
        small = [t.get_text() for t in texts if t.get_fontsize() < MIN_LEGEND_POINTS - 1e-9]
        if small:
            problems.append(f"legend text under {MIN_LEGEND_POINTS:g} pt: {small[0]!r}"
                            f" ({texts[0].get_fontsize():g} pt)")
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
        for j, (ta, a) in enumerate(boxes):
            for tb, b in boxes[j + 1:]:
                if _overlap(a, b):
                    problems.append(f"legend entries {ta!r} and {tb!r} overlap")
        box = legend.get_window_extent(renderer)
        for ax in under:
            points = _data_points(ax)
            inside = ((points[:, 0] > box.x0) & (points[:, 0] < box.x1)
                      & (points[:, 1] > box.y0) & (points[:, 1] < box.y1))
            if inside.any():
                panel = ax.get_title() or f"panel {fig.axes.index(ax) + 1}"
                problems.append(f"{panel}: the legend covers {int(inside.sum())} data points")
    return problems


#: Metadata that would make two saves of one figure differ, per format: a PDF's creation
#: date (matplotlib writes the clock's, or ``SOURCE_DATE_EPOCH``'s when set) is left out, so
#: outputs are byte-reproducible.
_STABLE_METADATA = {"pdf": {"CreationDate": None}}


def save_figure(fig, *paths) -> None:
    """Save ``fig`` to every path (format from the suffix, e.g. .png and .pdf), atomically,
    each with its sha256 in a sidecar (a figure damaged later is found and made again, as a
    result table is); the same figure gives the same bytes every time (no creation date).

    Every format gets the layout and the tight bounding box of one draw (the one
    :func:`layout_problems` made, when nothing changed since), so the files show the
    same arrangement."""
    # savefig(bbox_inches="tight") under a layout engine draws twice per format (once to lay
    # out and measure, once to render): the layout of a figure with a dozen panels is most of
    # its drawing time, so it is computed once here and frozen for every save
    if fig.stale:
        fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(
        matplotlib.rcParams["savefig.pad_inches"])
    fig.set_layout_engine("none")
    for path in paths:
        path = Path(path)
        fmt = path.suffix.lstrip(".")
        with atomic_path(path, sidecar=True) as tmp:
            fig.savefig(tmp, format=fmt, bbox_inches=box,
                        metadata=_STABLE_METADATA.get(fmt))
    plt.close(fig)

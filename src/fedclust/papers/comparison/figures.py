"""Figures of the cross-paper comparison, each drawn from its results table alone."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ...partitions import COMPARISON_PARTITIONS
from ...plots._style import dataset_title, figure_legend, new_figure
from ...vocabulary import algorithm_rank
from .summaries import comparison_stats, label_of

__all__ = ["pareto_front", "_pareto", "dropout", "heterogeneity"]

def _in_order(stats: pd.DataFrame) -> pd.DataFrame:
    """The rows with the families in the order of ``ALGORITHMS``, any other family (one a
    user added to the comparison) after them in the table's order."""
    return stats.sort_values("algorithm", key=algorithm_rank, kind="stable")


def _markers(stats: pd.DataFrame) -> dict:
    """Marker style of every label in ``stats``: one shape per algorithm family (a family
    beyond the sixth reuses one; its colour still differs), its first variant filled and each
    further variant hollow in a shape of its own, so that two variants at one point (the
    coreset over a star and over a graph, at equal rounds) both show."""
    families = dict(zip(dict.fromkeys(_in_order(stats)["algorithm"]),
                        itertools.cycle("*osDv^"), strict=False))
    others = itertools.cycle("<>PXhd")
    styles, seen = {}, set()
    for row in _in_order(stats).itertuples():
        label = label_of(row)
        if label in styles:
            continue
        if row.algorithm in seen:
            styles[label] = {"marker": next(others), "markerfacecolor": "none"}
        else:
            styles[label] = {"marker": families[row.algorithm]}
            seen.add(row.algorithm)
    return styles


def _colours(stats: pd.DataFrame) -> dict:
    import matplotlib

    labels = list(dict.fromkeys(label_of(r) for r in _in_order(stats).itertuples()))
    cmap = matplotlib.colormaps["tab10"]
    return {label: cmap(i % 10) for i, label in enumerate(labels)}


def _grid(stats: pd.DataFrame):
    datasets = list(dict.fromkeys(stats["dataset"]))
    partitions = [p for p in COMPARISON_PARTITIONS if p in set(stats["partition"])]
    return datasets, partitions


def pareto_front(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The points no other point beats on both ``x`` and ``y`` (lower is better), by ``x``."""
    order = np.lexsort((np.asarray(y), np.asarray(x)))
    xs, ys = np.asarray(x)[order], np.asarray(y)[order]
    keep = ys <= np.minimum.accumulate(ys)
    return xs[keep], ys[keep]


def _panels(table: pd.DataFrame, stats: pd.DataFrame, draw, xlabel: str):
    """One panel per (data set, partition) of ``stats``, each filled by ``draw(ax, cell)``;
    the cost axis logarithmic where it spans a wide range, one legend below."""
    datasets, partitions = _grid(stats)
    fig, axes = new_figure(len(partitions), len(datasets), width=3.3, height=2.6)
    for i, ds in enumerate(datasets):
        for j, part in enumerate(partitions):
            ax = axes[i, j]
            cell = stats[(stats["dataset"] == ds) & (stats["partition"] == part)]
            if cell.empty:
                ax.set_visible(False)
                continue
            draw(ax, cell)
            _log_if_wide(ax, cell)
            ax.set_title(f"{dataset_title(table, ds)}, {part}", fontsize=8)
            if i == len(datasets) - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel("cost / centralized cost")
    figure_legend(fig, axes)
    return fig


def _pareto(table: pd.DataFrame, *, x: str):
    """Cost over the centralized cost against bytes (or rounds), no dropout; one panel per
    (data set, partition), the Pareto front as grey steps."""
    stats = comparison_stats(table)
    stats = stats[stats["dropout"] == 0]
    colours, markers = _colours(stats), _markers(stats)

    def draw(ax, cell):
        bars = _run_range(cell)
        for i, row in enumerate(cell.itertuples()):
            ax.errorbar(getattr(row, x), row.cost_ratio, yerr=bars[:, [i]],
                        **markers[label_of(row)], color=colours[label_of(row)],
                        linestyle="none", markersize=7, label=label_of(row))
        fx, fy = pareto_front(cell[x], cell["cost_ratio"])
        ax.step(fx, fy, where="post", color="0.6", linewidth=1, zorder=0)
        ax.set_xscale("log")

    return _panels(table, stats, draw,
                   "bytes sent (up + down)" if x == "bytes" else "rounds")


def _run_range(rows: pd.DataFrame) -> np.ndarray:
    """Error bars from the mean down to the best run and up to the worst: a cost ratio is
    bimodal when a run merges two clusters (10x on the mixture), which mean +- std would
    draw below zero."""
    return np.vstack([rows["cost_ratio"] - rows["cost_ratio_min"],
                      rows["cost_ratio_max"] - rows["cost_ratio"]])


def _log_if_wide(ax, stats: pd.DataFrame) -> None:
    """A log cost axis when the runs' costs span more than a factor 5 (a merged pair of a
    well-separated mixture costs 10 to hundreds of times the optimum)."""
    if stats["cost_ratio_max"].max() > 5 * stats["cost_ratio_min"].min():
        ax.set_yscale("log")


def dropout(table: pd.DataFrame):
    """Cost over the centralized cost against the fraction of devices dropped out, one line
    per algorithm; one panel per (data set, partition).

    Its tables are written by :func:`~fedclust.papers.comparison.experiments.compare_setting`.
    """
    stats = comparison_stats(table)
    colours, markers = _colours(stats), _markers(stats)
    return _panels(table, stats,
                   lambda ax, cell: _lines(ax, cell, "dropout", colours, markers),
                   "fraction of devices dropped")


def _lines(ax, cell, x, colours, markers) -> None:
    for _, line in cell.groupby(["algorithm", "variant"], sort=False):
        line = line.sort_values(x)
        label = label_of(line.iloc[0])
        ax.errorbar(line[x], line["cost_ratio"], yerr=_run_range(line),
                    **markers[label], color=colours[label], label=label,
                    markersize=5, capsize=2)


def heterogeneity(table: pd.DataFrame):
    """Cost over the centralized cost from the natural partition (0) to IID (1), one line
    per algorithm; one panel per data set.

    Its tables are written by :func:`~fedclust.papers.comparison.experiments.heterogeneity_sweep`.
    """
    stats = comparison_stats(table)
    stats["mix"] = stats["partition"].str.removeprefix("mix=").astype(float)
    colours, markers = _colours(stats), _markers(stats)
    datasets = list(dict.fromkeys(stats["dataset"]))
    fig, axes = new_figure(len(datasets), 1, width=3.6, height=2.8)
    for ax, ds in zip(axes.flat, datasets, strict=True):
        _lines(ax, stats[stats["dataset"] == ds], "mix", colours, markers)
        _log_if_wide(ax, stats[stats["dataset"] == ds])
        ax.set_title(dataset_title(table, ds), fontsize=8)
        ax.set_xlabel("fraction of rows moved to random devices\n(0: natural, 1: IID)")
    axes[0, 0].set_ylabel("cost / centralized cost")
    figure_legend(fig, axes)
    return fig


def pareto_bytes(*tables: pd.DataFrame, **options):
    """Cost over the centralized cost against bytes sent: :func:`_pareto` with the options the
    figure declares.

    Its tables are written by :func:`~fedclust.papers.comparison.experiments.compare_setting`.
    """
    return _pareto(*tables, **options)


def pareto_rounds(*tables: pd.DataFrame, **options):
    """Cost over the centralized cost against rounds: :func:`_pareto` with the options the
    figure declares.

    Its tables are written by :func:`~fedclust.papers.comparison.experiments.compare_setting`.
    """
    return _pareto(*tables, **options)

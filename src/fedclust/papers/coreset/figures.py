"""Figures of the distributed-coreset paper (Balcan, Ehrlich & Liang 2013), each drawn only from
its results tables (``fedclust.papers.coreset.experiments.setting_runs``)."""

from __future__ import annotations

import textwrap

import pandas as pd

from ...plots._style import dataset_title, figure_legend, log_ticks, new_figure
from . import GRAPH_TITLES, GRAPHS
from .summaries import curve_stats, wide_runs

__all__ = ["_cost_vs_communication", "diameter"]

_GRAPH_TITLES = {g: GRAPH_TITLES[g] for g in GRAPHS}
_PARTITION_ORDER = ("uniform", "similarity", "weighted", "degree")
_STYLE = {"distributed": {"color": "C0", "marker": "o"},
          "combine": {"color": "C1", "marker": "s"},
          "zhang": {"color": "C3", "marker": "^"}}
_LABELS = {"distributed": "distributed coreset", "combine": "COMBINE",
           "zhang": "Zhang et al."}
_X_LABELS = {"points_transmitted": "communication (points transmitted)",
             "bytes": "communication (bytes)"}


def _ordered(values, order) -> list:
    present = list(dict.fromkeys(values))
    return [v for v in order if v in present] + [v for v in present if v not in order]


def _cost_vs_communication(*tables: pd.DataFrame, network: str, algorithms,
                           x: str = "points_transmitted"):
    """Figs 2 and 3: cost ratio against communication, one panel per graph (rows) and
    partition (columns), one line per construction (mean ± std over runs, log x axis).

    ``tables`` are setting tables of one data set and objective; ``network`` selects the
    communication graph (``"graph"``: flooding over the graph; ``"tree"``: its spanning tree).
    """
    runs = wide_runs(pd.concat(tables, ignore_index=True))
    runs = runs[runs["algorithm"].isin(algorithms)
                & ((runs["network"] == network) | (runs["algorithm"] == "zhang"))]
    if runs.empty:
        raise ValueError(f"no runs of {list(algorithms)} on network {network!r} in the tables")
    graphs = _ordered(runs["graph"], tuple(_GRAPH_TITLES))
    partitions = _ordered(runs["partition"], _PARTITION_ORDER)
    fig, axes = new_figure(len(partitions), len(graphs), width=3.0, height=2.4)
    for i, graph in enumerate(graphs):
        for j, partition in enumerate(partitions):
            ax = axes[i, j]
            sub = runs[(runs["graph"] == graph) & (runs["partition"] == partition)]
            for algorithm in algorithms:
                stats = curve_stats(sub[sub["algorithm"] == algorithm], x)
                if stats.empty:
                    continue
                ax.errorbar(stats["x"], stats["ratio"], yerr=stats["ratio_std"], capsize=2,
                            lw=1.3, ms=3.5, label=_LABELS[algorithm], **_STYLE[algorithm])
            ax.set_xscale("log")
            log_ticks(ax.xaxis)
            where = "spanning tree of " if network == "tree" else ""
            # a long graph name on a line of its own: the panels' titles never meet
            ax.set_title(textwrap.fill(f"{where}{_GRAPH_TITLES.get(graph, graph)}, {partition}",
                                       34), fontsize=9)
            if i == len(graphs) - 1:
                ax.set_xlabel(_X_LABELS.get(x, x))
            if j == 0:
                ax.set_ylabel("cost / cost of Lloyd\non the global data")
    figure_legend(fig, axes)
    first = runs.iloc[0]
    objective = "k-median" if first["objective"] == "kmedian" else "k-means"
    fig.suptitle(f"{dataset_title(runs, first['dataset'])}: {objective}, "
                 f"{int(first['n_sites'])} sites, {runs['run'].nunique()} runs")
    return fig


def diameter(*tables: pd.DataFrame):
    """Cost ratio (left) and points transmitted (right) against the grid's diameter, one line
    per construction and network, at one coreset size (mean ± std over runs).

    Its tables are written by :func:`~fedclust.papers.coreset.experiments.diameter_table`.
    """
    runs = wide_runs(pd.concat(tables, ignore_index=True))
    fig, axes = new_figure(2, 1, width=3.6, height=2.8)
    lines = [("distributed", "graph", "distributed coreset, flooded"),
             ("distributed", "tree", "distributed coreset, to the root"),
             ("combine", "graph", "COMBINE, flooded"),
             ("zhang", "tree", "Zhang et al.")]
    for algorithm, network, label in lines:
        sub = runs[(runs["algorithm"] == algorithm) & (runs["network"] == network)]
        if sub.empty:
            continue
        stats = sub.groupby("diameter").agg(
            ratio=("cost_ratio", "mean"), ratio_std=("cost_ratio", "std"),
            points=("points_transmitted", "mean")).fillna(0.0)
        style = dict(_STYLE[algorithm])
        if network == "tree" and algorithm == "distributed":
            style["ls"] = "--"
        axes[0, 0].errorbar(stats.index, stats["ratio"], yerr=stats["ratio_std"], capsize=2,
                            lw=1.3, ms=3.5, label=label, **style)
        axes[0, 1].plot(stats.index, stats["points"], lw=1.3, ms=3.5, label=label, **style)
    axes[0, 0].set_ylabel("cost / cost of Lloyd on the global data")
    axes[0, 1].set_ylabel("points transmitted")
    axes[0, 1].set_yscale("log")
    for ax in axes[0]:
        ax.set_xlabel("grid diameter (2 (side - 1))")
    figure_legend(fig, axes, ncols=2)
    first = runs.iloc[0]
    fig.suptitle(f"{dataset_title(runs, first['dataset'])}: square grids, "
                 f"{first['partition']} partition, {runs['run'].nunique()} runs")
    return fig


def fig2(*tables: pd.DataFrame, **options):
    """Fig 2: cost ratio against communication on general graphs:
    :func:`_cost_vs_communication` with the options the figure declares.

    Its tables are written by :func:`~fedclust.papers.coreset.experiments.setting_table`.
    """
    return _cost_vs_communication(*tables, **options)


def fig3(*tables: pd.DataFrame, **options):
    """Fig 3: cost ratio against communication on spanning trees, against Zhang et al.:
    :func:`_cost_vs_communication` with the options the figure declares.

    Its tables are written by :func:`~fedclust.papers.coreset.experiments.setting_table`.
    """
    return _cost_vs_communication(*tables, **options)


def fig2_bytes(*tables: pd.DataFrame, **options):
    """Fig 2 with communication counted in bytes: :func:`_cost_vs_communication` with the
    options the figure declares.

    Its tables are written by :func:`~fedclust.papers.coreset.experiments.setting_table`.
    """
    return _cost_vs_communication(*tables, **options)


def fig3_bytes(*tables: pd.DataFrame, **options):
    """Fig 3 with communication counted in bytes: :func:`_cost_vs_communication` with the
    options the figure declares.

    Its tables are written by :func:`~fedclust.papers.coreset.experiments.setting_table`.
    """
    return _cost_vs_communication(*tables, **options)


def kmedian(*tables: pd.DataFrame, **options):
    """Fig 2's graphs for k-median: :func:`_cost_vs_communication` with the options the figure
    declares.

    Its tables are written by :func:`~fedclust.papers.coreset.experiments.setting_table`.
    """
    return _cost_vs_communication(*tables, **options)

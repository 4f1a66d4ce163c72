"""Federated k-means (Triebe & Rajagopal, 2019): the figures, each from its results table.

* :func:`sweep` -- Figs 1-5: mean distance and Davies-Bouldin index against the varied
  hyper-parameter, training and test clients, mean ± std over seeds.
* :func:`progress` -- Figs 6-7: every centroid round by round, ± the spread of its rows.
* :func:`real` -- beyond the paper: cost over the pooled oracle against the floats sent
  on real federated data, beside k-FED and LocalKMeans.
"""

from __future__ import annotations

import pandas as pd

from ...plots._style import integer_ticks, new_figure, panel_legend
from ...vocabulary import ALGORITHM_TITLES
from . import CENTRAL, SYMBOLS, VARIED_TITLES
from .summaries import real_stats, sweep_stats

__all__ = ["sweep", "progress", "real"]

_METRICS = {"mean_distance": "mean distance to the centroid",
            "davies_bouldin": "Davies-Bouldin index"}
_SPLITS = {"train": ("tab:red", "training clients"), "test": ("tab:blue", "test clients")}


def sweep(table: pd.DataFrame):
    """Two panels (mean distance, Davies-Bouldin index) against the sweep's settings.

    Its tables are written by :func:`~fedclust.papers.fedkmeans.experiments.sweep_runs`.
    """
    if table.empty:
        raise ValueError("the sweep table is empty")
    stats = sweep_stats(table)
    settings = list(dict.fromkeys(stats.sort_values("position")["setting"]))
    fig, axes = new_figure(2, 1, width=3.4, height=2.7)
    for ax, (metric, label) in zip(axes[0], _METRICS.items(), strict=True):
        for split, (color, name) in _SPLITS.items():
            part = stats[(stats["split"] == split) & (stats["metric"] == metric)]
            if part.empty:
                continue
            ax.plot(part["position"], part["mean"], "o-", color=color, lw=1.3, ms=3.5,
                    label=name)
            ax.fill_between(part["position"], part["mean"] - part["std"],
                            part["mean"] + part["std"], color=color, alpha=0.2, lw=0)
        ax.set_xticks(range(len(settings)), settings)
        ax.set_xlabel(VARIED_TITLES[table["varied"].iloc[0]])
        ax.set_ylabel(label)
    panel_legend(axes[0, -1])
    seeds = table["seed"].nunique()
    varied = table["varied"].iloc[0]
    first = table[table["setting"] != CENTRAL].iloc[0]
    fixed = ", ".join(f"{symbol} = {first[name]}" for name, symbol in SYMBOLS.items()
                      if name != varied)
    fig.suptitle(f"Federated k-means, {table['sweep'].iloc[0]} ({fixed}): {seeds} seeds")
    return fig


def progress(table: pd.DataFrame):
    """Every centroid against the round, ± the standard deviation of the rows nearest to it.

    Its tables are written by :func:`~fedclust.papers.fedkmeans.experiments.progress_runs`.
    """
    if table.empty:
        raise ValueError("the progress table is empty")
    table = table.pivot_table(index=["progress", "data_means", "round", "cluster"],
                              columns="metric", values="value").reset_index()
    fig, axes = new_figure(1, 1, width=5.0, height=3.0)
    ax = axes[0, 0]
    for cluster, part in table.groupby("cluster"):
        part = part.sort_values("round")
        line, = ax.plot(part["round"], part["center"], lw=1.2, label=f"centroid {cluster}")
        ax.fill_between(part["round"], part["center"] - part["spread"],
                        part["center"] + part["spread"], color=line.get_color(), alpha=0.2,
                        lw=0)
    for mean in str(table["data_means"].iloc[0]).split():
        ax.axhline(float(mean), color="0.4", ls="--", lw=0.8)
    ax.set_xlabel("round")
    ax.set_ylabel("centroid")
    integer_ticks(ax.xaxis)
    panel_legend(ax)
    fig.suptitle(f"Federated k-means, {table['progress'].iloc[0]}: centroids by round")
    return fig


_REAL_STYLE = {"fedkmeans": ("tab:blue", "o"), "kfed": ("tab:red", "s"),
               "localkmeans": ("tab:green", "^")}


def real(table: pd.DataFrame):
    """Cost over the pooled k-means oracle against the floats sent, one point per algorithm
    and variant (mean ± std over runs).

    Its tables are written by :func:`~fedclust.papers.comparison.experiments.natural_client_runs`.
    """
    stats = real_stats(table)
    if stats.empty:
        raise ValueError("the real-data table has no finished run")
    fig, axes = new_figure(1, 1, width=4.6, height=3.0)
    ax = axes[0, 0]
    for algorithm, part in stats.groupby("algorithm"):
        color, marker = _REAL_STYLE.get(algorithm, ("0.3", "x"))
        label = ALGORITHM_TITLES.get(algorithm, algorithm)
        ax.errorbar(part["floats"], part["ratio"], yerr=part["ratio_std"], ls="none",
                    marker=marker, color=color, capsize=2, ms=5, label=label)
        for _, row in part.iterrows():
            ax.annotate(row["variant"], (row["floats"], row["ratio"]), fontsize=7,
                        xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("floats sent")
    ax.set_ylabel("cost / cost of k-means on the pooled data")
    panel_legend(ax)
    first = table.iloc[0]
    title = first["data_title"] if "data_title" in table.columns else first["dataset"]
    fig.suptitle(f"{title}: k = {int(first['n_clusters'])}, natural clients, "
                 f"{int(stats['runs'].max())} runs")
    return fig

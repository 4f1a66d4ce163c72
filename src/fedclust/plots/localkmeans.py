"""Figures of the LocalKMeans paper, each drawn only from a results table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import dataset_title, integer_ticks, new_figure

__all__ = ["order_local_steps", "normalized_objective", "plot_trajectories",
           "plot_final_sweeps"]


def order_local_steps(labels) -> list[str]:
    """``L=1`` first, larger ``L`` next, ``no aggregation`` last."""
    def key(label):
        return (1, 0) if label == "no aggregation" else (0, int(label.split("=")[1]))
    return sorted(set(labels), key=key)


def normalized_objective(runs: pd.DataFrame, by, metric: str = "global_objective"):
    """The ``metric`` rows divided by the same trial's final value for ``L=1`` (centralized
    Lloyd): 1 means centralized Lloyd's result."""
    obj = runs[runs["metric"] == metric]
    last = obj["iteration"] == obj["n_iter"]
    ref = obj[last & (obj["local_steps"] == "L=1")].set_index(list(by) + ["trial"])["value"]
    out = obj.copy()
    out["value"] = out["value"].to_numpy() / ref.loc[
        pd.MultiIndex.from_frame(out[list(by) + ["trial"]])].to_numpy()
    out["metric"] = "objective / centralized"
    return out


def _panel_lines(ax, sub: pd.DataFrame, metric: str, clip):
    for label in order_local_steps(sub["local_steps"].unique()):
        part = sub[(sub["local_steps"] == label) & (sub["metric"] == metric)]
        stats = part.groupby("iteration")["value"].agg(["mean", "std"]).fillna(0.0)
        style = {"ls": "--", "color": "k"} if label == "no aggregation" else {}
        line, = ax.plot(stats.index, stats["mean"], label=label, lw=1.4, **style)
        ax.fill_between(stats.index, np.clip(stats["mean"] - stats["std"], *clip),
                        np.clip(stats["mean"] + stats["std"], *clip), color=line.get_color(),
                        alpha=0.15, lw=0)


def plot_trajectories(runs: pd.DataFrame, *, metric: str = "misclustering", rows=None,
                      cols="dataset", ylabel: str | None = None, log: bool = False,
                      title: str | None = None):
    """A metric against the iteration, one line per ``L`` (mean ± std over trials), one panel
    per value of ``rows`` x ``cols`` (column names of ``runs``; ``rows`` may be None).

    Figure 1 uses rows = SNR, cols = initialization; Figures 2 and 3 one panel per data set.
    ``metric="objective / centralized"`` plots the global objective relative to centralized
    Lloyd's final one (:func:`normalized_objective`).
    """
    if metric == "objective / centralized":
        keys = [c for c in (rows, cols) if c]
        runs = normalized_objective(runs, keys)
    row_values = sorted(runs[rows].unique()) if rows else [None]
    col_values = sorted(runs[cols].unique())
    fig, axes = new_figure(ncols=len(col_values), nrows=len(row_values), width=3.2, height=2.5)
    clip = (0.0, 1.0) if metric == "misclustering" else (-np.inf, np.inf)
    for i, rv in enumerate(row_values):
        for j, cv in enumerate(col_values):
            sub = runs[runs[cols] == cv] if rows is None else \
                runs[(runs[rows] == rv) & (runs[cols] == cv)]
            ax = axes[i, j]
            _panel_lines(ax, sub, metric, clip)
            name = dataset_title(sub, cv) if cols == "dataset" else cv
            head = f"{name}" if rows is None else f"{rows} = {rv}, {name}"
            trials = sub["trial"].nunique()
            ax.set_title(f"{head} ({trials} trials)", fontsize=8)
            integer_ticks(ax.xaxis)
            if log:
                ax.set_yscale("log")
            if i == len(row_values) - 1:
                ax.set_xlabel("iteration t")
            if j == 0:
                ax.set_ylabel(ylabel or metric)
    axes[0, -1].legend(frameon=False, fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def _sweep_label(sub: pd.DataFrame, sweep: str) -> str:
    """Axis label of a Figure 4 sweep, with the fixed sizes read from the table."""
    if sweep == "n_clusters" and "samples_per_machine" in sub:
        return f"K ({int(sub['samples_per_machine'].iloc[0])} samples per machine)"
    if sweep == "n_machines" and "n_samples" in sub:
        return f"M ({int(sub['n_samples'].iloc[0]):,} samples in all)"
    return {"snr": "SNR r", "n_clusters": "K", "n_machines": "M"}.get(sweep, sweep)


def plot_final_sweeps(runs: pd.DataFrame):
    """Figure 4: misclustering after T iterations as the SNR, K or M varies, one panel per
    sweep, one line per ``L`` (mean ± std over trials)."""
    sweeps = [s for s in ("snr", "n_clusters", "n_machines") if s in set(runs["sweep"])]
    fig, axes = new_figure(ncols=len(sweeps), width=3.2, height=2.6)
    final = runs[(runs["metric"] == "misclustering") & (runs["iteration"] == runs["n_iter"])]
    for letter, ax, sweep in zip("abc"[:len(sweeps)], axes[0], sweeps, strict=True):
        sub = final[final["sweep"] == sweep]
        for label in order_local_steps(sub["local_steps"].unique()):
            stats = sub[sub["local_steps"] == label].groupby(sweep)["value"].agg(
                ["mean", "std"]).fillna(0.0)
            style = {"ls": "--", "color": "k"} if label == "no aggregation" else {}
            # a rate cannot go below 0: clip the lower error bar there
            below = stats["mean"] - np.maximum(stats["mean"] - stats["std"], 0.0)
            ax.errorbar(stats.index, stats["mean"], yerr=[below, stats["std"]], marker="o",
                        ms=3, capsize=2, label=label, **style)
        ax.set_xlabel(_sweep_label(sub, sweep))
        ax.set_ylabel("misclustering after T iterations")
        ax.set_title(f"({letter})", loc="left", fontsize=9)
        if sweep == "n_machines":
            ax.set_xscale("log", base=2)
        values = sorted(sub[sweep].unique())
        ax.set_xticks(values, [f"{v:g}" for v in values])
    axes[0, 0].legend(frameon=False, fontsize=7)
    return fig

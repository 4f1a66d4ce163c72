"""Figures of the LocalKMeans paper, each drawn only from a results table."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from ...plots._style import (
    dataset_title,
    figure_legend,
    integer_ticks,
    new_figure,
    panel_legend,
    plt,
)

__all__ = ["order_local_steps", "normalized_objective", "_trajectories",
           "fig4_sweeps"]


#: the label of the dotted line with no aggregation's machines' own objective (Figure 3)
OWN_OBJECTIVE = "no aggregation, machines' own objective"


def order_local_steps(labels) -> list[str]:
    """``L=1`` first, larger ``L`` next, ``no aggregation`` (and its variants) last."""
    def key(label):
        if label.startswith("no aggregation"):
            return (1, len(label))
        return (0, int(label.split("=")[1]))
    return sorted(set(labels), key=key)


def normalized_objective(runs: pd.DataFrame, by, metric: str = "global_objective"):
    """The ``metric`` rows divided by the same trial's final value for ``L=1`` (centralized
    Lloyd): 1 means centralized Lloyd's result. ``"global_objective"`` is the cost of every row
    under the size-weighted aggregate of the machines' centers (the shared centers whenever the
    machines are synchronized); ``"objective"`` the machines' own (every row to its machine's
    current centers; for no aggregation, each machine's own clustering). The two agree for
    ``L=1``, so either is divided by the same reference."""
    obj = runs[runs["metric"] == metric]
    last = obj["iteration"] == obj["n_iter"]
    ref = obj[last & (obj["local_steps"] == "L=1")].set_index(list(by) + ["trial"])["value"]
    out = obj.copy()
    out["value"] = out["value"].to_numpy() / ref.loc[
        pd.MultiIndex.from_frame(out[list(by) + ["trial"]])].to_numpy()
    out["metric"] = "objective / centralized"
    return out


def _with_own_objective(runs: pd.DataFrame, normalized: pd.DataFrame, by) -> pd.DataFrame:
    """``normalized`` plus no aggregation's machines' own objective, labelled
    :data:`OWN_OBJECTIVE` (divided by centralized Lloyd's final objective, as the rest)."""
    own = normalized_objective(runs, by, "objective")
    own = own[own["local_steps"] == "no aggregation"].assign(local_steps=OWN_OBJECTIVE)
    return pd.concat([normalized, own], ignore_index=True)


_LINE_STYLES = {"no aggregation": {"ls": "--", "color": "k"},
                OWN_OBJECTIVE: {"ls": ":", "color": "0.45"}}


def _panel_lines(ax, sub: pd.DataFrame, metric: str, clip):
    for label in order_local_steps(sub["local_steps"].unique()):
        part = sub[(sub["local_steps"] == label) & (sub["metric"] == metric)]
        stats = part.groupby("iteration")["value"].agg(["mean", "std"]).fillna(0.0)
        style = _LINE_STYLES.get(label, {})
        line, = ax.plot(stats.index, stats["mean"], label=label, lw=1.4, **style)
        ax.fill_between(stats.index, np.clip(stats["mean"] - stats["std"], *clip),
                        np.clip(stats["mean"] + stats["std"], *clip), color=line.get_color(),
                        alpha=0.15, lw=0)


def _trajectories(runs: pd.DataFrame, *, metric: str, rows=None, cols="dataset",
                  ylabel: str | None = None, log: bool = False, title: str | None = None,
                  objective: str = "global_objective", own_objective: bool = False):
    """A metric against the iteration, one line per ``L`` (mean ± std over trials), one panel
    per value of ``rows`` x ``cols`` (column names of ``runs``; ``rows`` may be None).

    Figure 1 uses rows = SNR, cols = initialization; Figures 2 and 3 one panel per data set.
    ``metric="objective / centralized"`` plots the ``objective`` column relative to
    centralized Lloyd's final one (:func:`normalized_objective`); ``own_objective`` adds no
    aggregation's machines' own objective as a dotted line.
    """
    if metric == "objective / centralized":
        keys = [c for c in (rows, cols) if c]
        normalized = normalized_objective(runs, keys, objective)
        runs = _with_own_objective(runs, normalized, keys) if own_objective else normalized
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
            ax.set_title(textwrap.fill(f"{head} ({trials} trials)", 40), fontsize=8)
            integer_ticks(ax.xaxis)
            if log:
                ax.set_yscale("log")
            if i == len(row_values) - 1:
                ax.set_xlabel("iteration t")
            if j == 0:
                ax.set_ylabel(ylabel or metric)
    panel_legend(axes[0, -1])
    if title:
        fig.suptitle(title)
    return fig


def _sweep_label(sub: pd.DataFrame, sweep: str) -> str:
    """Axis label of a Figure 4 sweep, with the fixed sizes read from the table."""
    if sweep == "n_clusters" and "samples_per_machine" in sub:
        fixed = f"{int(sub['samples_per_machine'].iloc[0])} samples per machine"
        if "separation" in sub and sub["separation"].round(6).nunique() == 1:
            fixed += f", Δ/σ = {float(sub['separation'].iloc[0]):.2f}"
        elif "snr" in sub and sub["snr"].round(6).nunique() == 1:
            fixed += f", r = {float(sub['snr'].iloc[0]):g}"
        return f"K ({fixed})"
    if sweep == "n_machines" and "n_samples" in sub:
        return f"M ({int(sub['n_samples'].iloc[0]):,} samples in all)"
    return {"snr": "SNR r", "n_clusters": "K", "n_machines": "M"}.get(sweep, sweep)


def _holds_separation(sub: pd.DataFrame) -> bool:
    """A K sweep holds the clusters' separation Δ/σ (not the SNR r) across its K."""
    return "separation" in sub and sub["separation"].round(6).nunique() == 1 and not (
        "snr" in sub and sub["snr"].round(6).nunique() == 1)


def _curve_steps(labels) -> str:
    """The ``L`` whose curves Figure 4 draws: L=3 (the paper's), else the smallest ``L > 1``."""
    ordered = [lab for lab in order_local_steps(labels) if lab not in ("L=1", "no aggregation")]
    return "L=3" if "L=3" in ordered else (ordered[0] if ordered else order_local_steps(labels)[0])


_MARKERS = {"L=1": "s", "no aggregation": "x"}


def fig4_sweeps(runs: pd.DataFrame):
    """Figure 4 (App. B.2): one column per sweep (SNR, K, M). Top: misclustering against the
    iteration for ``L = 3`` with LocalKMeans++ (as the paper draws it), one line per swept
    value (mean over trials). Bottom: misclustering after ``T`` iterations against the swept
    value for every ``L`` (mean ± std; the ``L`` are offset sideways so none hides another).

    Its tables are written by :func:`~fedclust.papers.localkmeans.experiments.fig4_sweep`.
    """
    mis = runs[runs["metric"] == "misclustering"]
    present = set(runs["sweep"])
    # Fig 4(b) in both readings: the K sweep holding r first (as printed), the one holding
    # Δ/σ second (ours), whichever sweep name holds which
    k_sweeps = sorted((s for s in ("n_clusters", "n_clusters_other") if s in present),
                      key=lambda s: _holds_separation(mis[mis["sweep"] == s]))
    panels = [("a", "snr")] if "snr" in present else []
    panels += [(letter, s) for letter, s in zip(("b", "b'"), k_sweeps, strict=False)]
    panels += [("c", "n_machines")] if "n_machines" in present else []
    fig, axes = new_figure(ncols=len(panels), nrows=2, width=3.3, height=2.6)
    curve_L = _curve_steps(mis["local_steps"].unique())
    for col, (letter, name) in enumerate(panels):
        sub = mis[mis["sweep"] == name]
        sweep = "n_clusters" if name == "n_clusters_other" else name
        values = sorted(sub[sweep].unique())
        colors = plt.cm.viridis(np.linspace(0.0, 0.9, len(values)))
        ax = axes[0, col]
        for color, value in zip(colors, values, strict=True):
            part = sub[(sub[sweep] == value) & (sub["local_steps"] == curve_L)]
            stats = part.groupby("iteration")["value"].mean()
            ax.plot(stats.index, stats.to_numpy(), color=color, lw=1.3, label=f"{value:g}")
        held = ("" if sweep != "n_clusters" else
                " (Δ/σ held)" if _holds_separation(sub) else " (r held)")
        ax.set_title(f"({letter}) {curve_L}, varying "
                     f"{ {'snr': 'SNR r', 'n_clusters': 'K'}.get(sweep, 'M')}{held}",
                     loc="left", fontsize=8)
        ax.set_xlabel("iteration t")
        ax.set_ylabel("misclustering rate")
        integer_ticks(ax.xaxis)
        panel_legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.28),
                     ncols=min(4, len(values)), title=sweep.replace("n_", ""),
                     title_fontsize=8)
        ax = axes[1, col]
        final = sub[sub["iteration"] == sub["n_iter"]]
        labels = order_local_steps(final["local_steps"].unique())
        spread = 0.12 * (np.min(np.diff(values)) if len(values) > 1 else 1.0)
        for i, label in enumerate(labels):
            stats = final[final["local_steps"] == label].groupby(sweep)["value"].agg(
                ["mean", "std"]).fillna(0.0)
            offset = i - (len(labels) - 1) / 2
            xs = stats.index.to_numpy(dtype=float)
            # side by side: a fixed step (a fixed factor on the log axis of M)
            xs = xs * 2 ** (0.08 * offset) if sweep == "n_machines" else xs + offset * spread
            style = {"ls": "--", "color": "k"} if label == "no aggregation" else {}
            below = stats["mean"] - np.maximum(stats["mean"] - stats["std"], 0.0)
            ax.errorbar(xs, stats["mean"], yerr=[below, stats["std"]],
                        marker=_MARKERS.get(label, "o"), ms=3, capsize=2, label=label, **style)
        ax.set_xlabel(_sweep_label(sub, sweep))
        ax.set_ylabel("misclustering after T iterations")
        if sweep == "n_machines":
            ax.set_xscale("log", base=2)
        ax.set_xticks(values, [f"{v:g}" for v in values])
    figure_legend(fig, axes[1])
    return fig


def fig1_misclustering(*tables: pd.DataFrame, **options):
    """Fig 1: misclustering against iterations on Gaussian mixtures: :func:`_trajectories` with
    the options the figure declares.

    Its tables are written by :func:`~fedclust.papers.localkmeans.experiments.fig1_panel`.
    """
    return _trajectories(*tables, **options)


def fig2_misclustering_real(*tables: pd.DataFrame, **options):
    """Fig 2: misclustering against iterations on real data: :func:`_trajectories` with the
    options the figure declares.

    Its tables are written by :func:`~fedclust.papers.localkmeans.experiments.real_data_runs`.
    """
    return _trajectories(*tables, **options)


def fig3_objective_real(*tables: pd.DataFrame, **options):
    """Fig 3: the global model's k-means objective against iterations on real data:
    :func:`_trajectories` with the options the figure declares.

    Its tables are written by :func:`~fedclust.papers.localkmeans.experiments.real_data_runs`.
    """
    return _trajectories(*tables, **options)

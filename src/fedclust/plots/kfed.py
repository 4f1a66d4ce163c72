"""Figures and tables of the k-FED paper, each drawn only from a results table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import new_figure

__all__ = [
    "summarize_runs",
    "table1_markdown",
    "plot_accuracy_vs_separation",
    "plot_separation_distribution",
]


def summarize_runs(runs: pd.DataFrame, metric: str, by) -> pd.DataFrame:
    """Mean, standard deviation and number (``n_runs``) of ``metric`` values, per group ``by``."""
    sel = runs[runs["metric"] == metric]
    if sel.empty:
        raise ValueError(f"no rows with metric {metric!r}; metrics present: "
                         f"{sorted(runs['metric'].unique())}")
    out = sel.groupby(list(by), sort=True)["value"].agg(["mean", "std", "count"]).reset_index()
    out = out.rename(columns={"count": "n_runs"})
    out["std"] = out["std"].fillna(0.0)
    return out


def table1_markdown(runs: pd.DataFrame, paper: pd.DataFrame | None = None) -> str:
    """Table 1 as a Markdown table: accuracy mean +- std over runs for each (d, k).

    ``paper`` (columns ``n_features, n_clusters, paper_value``) adds the paper's column.
    """
    keys = ["n_features", "n_clusters", "device_clusters", "devices_per_cluster", "separation"]
    acc = summarize_runs(runs, "accuracy", keys)
    devices = summarize_runs(runs, "n_devices", keys)[keys + ["mean"]].rename(
        columns={"mean": "n_devices"})
    acc = acc.merge(devices, on=keys)
    if paper is not None:
        acc = acc.merge(paper[["n_features", "n_clusters", "paper_value"]],
                        on=["n_features", "n_clusters"], how="left")
    header = "| d | k | k' | m0 | devices | c | runs | accuracy (reproduced) |"
    rule = "|---|---|---|---|---|---|---|---|"
    if paper is not None:
        header += " accuracy (paper) |"
        rule += "---|"
    lines = [header, rule]
    for row in acc.itertuples():
        line = (f"| {row.n_features} | {row.n_clusters} | {row.device_clusters} | "
                f"{row.devices_per_cluster} | {int(row.n_devices)} | {row.separation:g} | "
                f"{int(row.n_runs)} | "
                f"{row.mean:.3f} ± {row.std:.3f} |")
        if paper is not None:
            value = row.paper_value
            line += f" {value:.2f} |" if np.isfinite(value) else " n/a |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def plot_accuracy_vs_separation(runs: pd.DataFrame, *, title: str | None = None):
    """Figure 1: accuracy of k-FED's induced clustering against the separation ``c``.

    One line per ``(d, k)``, mean over runs with a +-1 std band, ``c`` on a log axis.
    """
    keys = ["n_features", "n_clusters", "device_clusters", "devices_per_cluster", "separation"]
    summary = summarize_runs(runs, "accuracy", keys)
    fig, axes = new_figure(width=4.2, height=3.0)
    ax = axes[0, 0]
    for (d, k, kp, m0), grp in summary.groupby(keys[:-1], sort=True):
        grp = grp.sort_values("separation")
        line, = ax.plot(grp["separation"], grp["mean"], marker="o", ms=3,
                        label=f"d={d}, k={k}, k'={kp}")
        ax.fill_between(grp["separation"], grp["mean"] - grp["std"],
                        np.minimum(grp["mean"] + grp["std"], 1.0), color=line.get_color(),
                        alpha=0.2, lw=0)
    ax.set_xscale("log")
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("separation c (min over pairs of $c_{rs}$)")
    ax.set_ylabel("accuracy of the induced clustering")
    ax.set_ylim(-0.02, 1.02)
    m0 = sorted(summary["devices_per_cluster"].unique())
    runs_per_point = int(summary["n_runs"].min())
    ax.set_title(title or f"k-FED on Gaussian mixtures (m0={m0[0] if len(m0) == 1 else m0}, "
                          f"{runs_per_point} runs)")
    ax.legend(loc="lower right", frameon=False)
    return fig


def plot_separation_distribution(pairs: pd.DataFrame, summary: pd.DataFrame, *,
                                 threshold: float, title: str | None = None):
    """Figure 5: distribution of ``c_rs`` of the oracle clusters for each ``k`` (left) and the
    share of pairs above ``threshold`` (right), the chosen ``k`` marked."""
    fig, axes = new_figure(ncols=2, width=3.6, height=3.0)
    ks = sorted(pairs["n_clusters"].unique())
    data = [pairs.loc[pairs["n_clusters"] == k, "value"].to_numpy() for k in ks]
    ax = axes[0, 0]
    ax.boxplot(data, positions=np.arange(len(ks)), widths=0.6, showfliers=True,
               flierprops={"markersize": 2, "alpha": 0.5})
    ax.set_xticks(np.arange(len(ks)), [str(k) for k in ks])
    ax.axhline(threshold, color="C3", lw=1, ls="--", label=f"$c_0$ = {threshold:g}")
    ax.set_xlabel("k (oracle clusters)")
    ax.set_ylabel("$c_{rs}$ over pairs of oracle clusters")
    ax.legend(frameon=False, loc="upper right")
    ax = axes[0, 1]
    summary = summary.sort_values("n_clusters")
    ax.plot(summary["n_clusters"], summary["share_above"], marker="o", ms=3)
    chosen = summary[summary["chosen"]]
    ax.scatter(chosen["n_clusters"], chosen["share_above"], s=60, facecolors="none",
               edgecolors="C3", zorder=3, label=f"chosen k = {int(chosen['n_clusters'].iloc[0])}")
    ax.set_xlabel("k (oracle clusters)")
    ax.set_ylabel(f"share of pairs with $c_{{rs}} > {threshold:g}$")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(frameon=False, loc="lower left")
    first = summary.iloc[0]
    fig.suptitle(title or f"Separation of {first['dataset']} under its oracle clustering "
                          f"(n={int(first['n_samples'])}, k'={int(first['device_clusters'])}, "
                          f"m0={int(first['devices_per_cluster'])})")
    return fig

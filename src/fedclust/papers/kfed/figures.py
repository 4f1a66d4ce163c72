"""Figures and tables of the k-FED paper, each drawn only from a results table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plots._style import dataset_title, figure_legend, new_figure, panel_legend

__all__ = [
    "summarize_runs",
    "table1_markdown",
    "table1_report",
    "fig1_accuracy_vs_separation",
    "fig5_separation",
    "table2_rotated_mnist",
    "fig4_client_selection",
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
    """Table 1 as a Markdown table: accuracy (%) mean ± std over runs for each (d, k).

    ``paper`` (columns ``n_features, n_clusters, paper_value, paper_std``, fractions) adds the
    paper's column.
    """
    keys = ["n_features", "n_clusters", "device_clusters", "devices_per_cluster", "separation"]
    acc = summarize_runs(runs, "accuracy", keys)
    devices = summarize_runs(runs, "n_devices", keys)[keys + ["mean"]].rename(
        columns={"mean": "n_devices"})
    acc = acc.merge(devices, on=keys)
    if paper is not None:
        acc = acc.merge(paper[["n_features", "n_clusters", "paper_value", "paper_std"]],
                        on=["n_features", "n_clusters"], how="left")
    header = "| d | k | k' | m0 | devices | c | runs | accuracy % (reproduced) |"
    rule = "|---|---|---|---|---|---|---|---|"
    if paper is not None:
        header += " accuracy % (paper) |"
        rule += "---|"
    lines = [header, rule]
    for row in acc.itertuples():
        line = (f"| {row.n_features} | {row.n_clusters} | {row.device_clusters} | "
                f"{row.devices_per_cluster} | {int(row.n_devices)} | {row.separation:g} | "
                f"{int(row.n_runs)} | {100 * row.mean:.2f} ± {100 * row.std:.2f} |")
        if paper is not None:
            value = row.paper_value
            line += f" {100 * value:.2f} ± {100 * row.paper_std:.2f} |" if np.isfinite(value) \
                else " n/a |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def table1_report(runs: pd.DataFrame, targets: dict) -> str:
    """Table 1 as a Markdown page: reproduced accuracy beside the paper's, with provenance.

    ``targets`` is the parsed ``paper_targets.yaml`` (its ``kfed.table1`` entry is used).
    """
    spec = targets["kfed"]["table1"]
    paper = pd.DataFrame(spec["rows"]).rename(columns={"value": "paper_value",
                                                       "std": "paper_std"})
    return ("# k-FED, Table 1: accuracy on Gaussian mixtures\n\n"
            + table1_markdown(runs, paper)
            + "\nPaper values: " + spec["provenance"] + "\n")


def fig1_accuracy_vs_separation(runs: pd.DataFrame, *, title: str | None = None):
    """Figure 1: accuracy of k-FED's induced clustering against the separation ``c``.
    Its tables are written by :func:`~fedclust.papers.kfed.synthetic.run_setting`.

    One line per ``(d, k)``, mean over runs with a +-1 std band, ``c`` on a log axis.
    """
    keys = ["n_features", "n_clusters", "device_clusters", "devices_per_cluster", "separation"]
    summary = summarize_runs(runs, "accuracy", keys)
    fig, axes = new_figure(width=4.2, height=3.0)
    ax = axes[0, 0]
    planned = _runs_per_point(runs)
    for (d, k, kp, _m0), grp in summary.groupby(keys[:-1], sort=True):
        grp = grp.sort_values("separation")
        line, = ax.plot(grp["separation"], grp["mean"], marker="o", ms=3,
                        label=f"d={d}, k={k}, k'={kp}")
        ax.fill_between(grp["separation"], grp["mean"] - grp["std"],
                        np.minimum(grp["mean"] + grp["std"], 1.0), color=line.get_color(),
                        alpha=0.2, lw=0)
        annotate_run_counts(ax, grp["separation"], grp["mean"], grp["n_runs"],
                            expected=planned, color=line.get_color())
    ax.set_xscale("log")
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("separation c (smallest $c_{rs}$ over active pairs)")
    ax.set_ylabel("accuracy of the induced clustering")
    ax.set_ylim(-0.02, 1.02)
    m0 = sorted(summary["devices_per_cluster"].unique())
    ax.set_title(title or f"k-FED on Gaussian mixtures (m0={m0[0] if len(m0) == 1 else m0}, "
                          f"{planned} runs per point; n= where fewer)")
    ax.legend(loc="lower right", frameon=False)
    return fig


def fig5_separation(pairs: pd.DataFrame, summary: pd.DataFrame, *,
                                 title: str | None = None):
    """Figure 5: distribution of ``c_rs`` of the oracle clusters for each ``k`` (left) and the
    share of pairs above the summary's ``threshold`` ``c0`` (right), the chosen ``k`` marked.

    Its tables are written by :func:`~fedclust.papers.kfed.separation.pairs_table`.
    """
    threshold = float(summary["threshold"].iloc[0])
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
    ax = axes[0, 1]
    summary = summary.sort_values("n_clusters")
    ax.plot(summary["n_clusters"], summary["share_above"], marker="o", ms=3)
    chosen = summary[summary["chosen"]]
    ax.scatter(chosen["n_clusters"], chosen["share_above"], s=60, facecolors="none",
               edgecolors="C3", zorder=3, label=f"chosen k = {int(chosen['n_clusters'].iloc[0])}")
    ax.set_xlabel("k (oracle clusters)")
    ax.set_ylabel(f"share of pairs with $c_{{rs}} > {threshold:g}$")
    ax.set_ylim(-0.02, 1.02)
    figure_legend(fig, axes)
    first = summary.iloc[0]
    fig.suptitle(title or f"Separation of {dataset_title(summary, first['dataset'])} under its "
                          f"oracle "
                          f"clustering (n={int(first['n_samples'])}, "
                          f"k'={int(first['device_clusters'])}, "
                          f"m0={int(first['devices_per_cluster'])})")
    return fig


def _mean_std_line(ax, runs: pd.DataFrame, x: str, metric: str, *, label: str,
                   clip=(-np.inf, np.inf), **style):
    """Mean of ``metric`` against ``x`` with a +-1 std band clipped to ``clip``."""
    summary = summarize_runs(runs, metric, [x]).sort_values(x)
    line, = ax.plot(summary[x], summary["mean"], marker="o", ms=3, label=label, **style)
    ax.fill_between(summary[x], np.clip(summary["mean"] - summary["std"], *clip),
                    np.clip(summary["mean"] + summary["std"], *clip), color=line.get_color(),
                    alpha=0.2, lw=0)
    annotate_run_counts(ax, summary[x], summary["mean"], summary["n_runs"],
                        expected=_runs_per_point(runs), color=line.get_color())
    return line


def _runs_per_point(runs: pd.DataFrame) -> int:
    """Runs a point would hold had none been skipped."""
    return int(runs["run"].nunique()) if "run" in runs.columns else 0


def annotate_run_counts(ax, xs, ys, counts, *, expected: int, color=None) -> None:
    """Label with ``n=...`` every point holding fewer than ``expected`` runs (some skipped)."""
    for x, y, n in zip(xs, ys, counts, strict=True):
        if n < expected:
            ax.annotate(f"n={int(n)}", (x, y), textcoords="offset points", xytext=(3, 4),
                        fontsize=6, color=color)


def _datasets(runs: pd.DataFrame) -> list[str]:
    return sorted(runs["dataset"].unique())


def _oracle_k(runs: pd.DataFrame, dataset: str) -> str:
    ks = sorted(runs.loc[runs["dataset"] == dataset, "n_clusters"].unique())
    return ", ".join(str(k) for k in ks)


def fig2_structured_vs_iid(runs: pd.DataFrame):
    """Figure 2: k-FED on structured vs IID partitions with the same number of devices.
    Its tables are written by :func:`~fedclust.papers.kfed.federated.run_experiment`.

    Top: ``(phi(k') - phi*) / (phi~(k') - phi*)`` against ``k'`` (symlog scale; below 1, the
    structured partition brought k-FED closer to the oracle). Bottom: both costs over ``phi*``.
    """
    datasets = _datasets(runs)
    fig, axes = new_figure(ncols=len(datasets), nrows=2, width=3.6, height=2.6)
    for col, ds in enumerate(datasets):
        sub = runs[runs["dataset"] == ds]
        ax = axes[0, col]
        _mean_std_line(ax, sub, "device_clusters", "cost_gap_ratio", label="mean ± std",
                       clip=(0.0, np.inf))
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        # the ratio spans orders of magnitude and reaches 0 (structured = oracle)
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_title(f"{dataset_title(sub, ds)} (oracle k = {_oracle_k(sub, ds)})")
        ax.set_ylabel(r"$(\phi(k') - \phi^*) / (\tilde\phi(k') - \phi^*)$" + "\n(Eq. 1 costs)")
        ax = axes[1, col]
        _mean_std_line(ax, sub, "device_clusters", "structured_cost_over_oracle",
                       label="structured")
        _mean_std_line(ax, sub, "device_clusters", "iid_cost_over_oracle", label="IID")
        ax.set_xlabel("k' (oracle clusters per device)")
        ax.set_ylabel(r"k-FED cost / $\phi^*$")
        ax.legend(frameon=False)
    return fig


def fig3_kfed_vs_distributed_lloyd(runs: pd.DataFrame):
    """Figure 3: k-means cost (over the oracle's) and bytes sent by k-FED (one server round,
    and the server run to convergence) and naive distributed k-means, against ``k'``, one
    column per data set; the bars are labelled with rounds (the baseline's as seeding +
    Lloyd).

    Its tables are written by :func:`~fedclust.papers.kfed.federated.run_experiment`.
    """
    datasets = _datasets(runs)
    algorithms = sorted(runs["algorithm"].unique(), key=lambda a: (a != "k-FED", a))
    most = runs.groupby("dataset")["device_clusters"].nunique().max()
    fig, axes = new_figure(ncols=len(datasets), nrows=2, width=max(3.8, 0.9 * most * 1.3),
                           height=2.6)
    for col, ds in enumerate(datasets):
        sub = runs[runs["dataset"] == ds]
        kps = sorted(int(v) for v in sub["device_clusters"].unique())
        x = np.arange(len(kps))
        width = 0.8 / len(algorithms)
        for i, algo in enumerate(algorithms):
            mine = sub[sub["algorithm"] == algo]
            if mine[mine["metric"] == "cost_over_oracle"].empty:
                continue
            cost = summarize_runs(mine, "cost_over_oracle", ["device_clusters"]).set_index(
                "device_clusters").reindex(kps)
            sent = summarize_runs(mine, "bytes", ["device_clusters"]).set_index(
                "device_clusters").reindex(kps)
            pos = x - 0.4 + width * (i + 0.5)
            drawn = axes[0, col].errorbar(pos, cost["mean"], yerr=cost["std"], fmt="o", ms=4,
                                          capsize=2, label=algo)
            annotate_run_counts(axes[0, col], pos, cost["mean"], cost["n_runs"].fillna(0),
                                expected=_runs_per_point(runs),
                                color=drawn.lines[0].get_color())
            bars = axes[1, col].bar(pos, sent["mean"].to_numpy(), width, label=algo)
            rounds = summarize_runs(mine, "rounds", ["device_clusters"]).set_index(
                "device_clusters").reindex(kps)["mean"]
            if mine.loc[mine["metric"] == "lloyd_rounds", "value"].notna().any():
                seeding = summarize_runs(mine, "seeding_rounds", ["device_clusters"]).set_index(
                    "device_clusters").reindex(kps)["mean"]
                lloyd = summarize_runs(mine, "lloyd_rounds", ["device_clusters"]).set_index(
                    "device_clusters").reindex(kps)["mean"]
                texts = [f"{s:.0f}+{ll:.0f}" for s, ll in zip(seeding, lloyd, strict=True)]
            else:
                texts = [f"{r:.0f}" for r in rounds]
            for bar, text in zip(bars, texts, strict=True):
                axes[1, col].annotate(text, (bar.get_x() + bar.get_width() / 2,
                                             bar.get_height()), ha="center", va="bottom",
                                      fontsize=6)
        for row in (0, 1):
            axes[row, col].set_xticks(x, [str(kp) for kp in kps])
            axes[row, col].set_xlabel("k' (oracle clusters per device)")
        axes[0, col].axhline(1.0, color="grey", lw=0.8, ls="--")
        axes[0, col].set_ylabel(r"k-means cost (Eq. 1) / $\phi^*$")
        axes[0, col].set_title(f"{dataset_title(sub, ds)} (oracle k = {_oracle_k(sub, ds)})")
        axes[1, col].set_yscale("log")
        axes[1, col].set_ylabel("bytes sent (up + down)\nlabels: rounds")
    figure_legend(fig, axes[0])
    return fig


def participation(runs: pd.DataFrame):
    """k-FED when devices fail before sending: accuracy against the oracle and cost over
    ``phi*`` against the fraction of devices that reach the server.

    Its tables are written by :func:`~fedclust.papers.kfed.federated.run_experiment`.
    """
    fig, axes = new_figure(ncols=2, width=3.4, height=2.7)
    for ds in _datasets(runs):
        sub = runs[runs["dataset"] == ds]
        label = f"{dataset_title(sub, ds)} (k={_oracle_k(sub, ds)})"
        _mean_std_line(axes[0, 0], sub, "participation", "accuracy", label=label,
                       clip=(0.0, 1.0))
        _mean_std_line(axes[0, 1], sub, "participation", "cost_over_oracle", label=label)
    axes[0, 0].set_ylabel("accuracy vs oracle clustering")
    axes[0, 1].set_ylabel(r"k-means cost / $\phi^*$")
    for ax in axes[0]:
        ax.set_xlabel("fraction of devices participating")
    figure_legend(fig, axes)
    fig.suptitle("k-FED with device failures (failed devices clustered afterwards, Thm 3.2)")
    return fig


def new_devices(runs: pd.DataFrame):
    """Devices that join after the fit: clustered through ``predict`` (Theorem 3.2) vs a refit
    with them, scored on the late devices' points.

    Its tables are written by :func:`~fedclust.papers.kfed.federated.run_experiment`.
    """
    datasets = _datasets(runs)
    fig, axes = new_figure(ncols=len(datasets), nrows=2, width=3.4, height=2.5)
    for col, ds in enumerate(datasets):
        sub = runs[runs["dataset"] == ds]
        for method in sorted(sub["method"].unique()):
            part = sub[sub["method"] == method]
            _mean_std_line(axes[0, col], part, "held_out", "held_out_accuracy", label=method,
                           clip=(0.0, 1.0))
            _mean_std_line(axes[1, col], part, "held_out", "held_out_cost_over_oracle",
                           label=method)
        axes[0, col].set_title(f"{dataset_title(sub, ds)} (k={_oracle_k(sub, ds)})")
        axes[0, col].set_ylabel("accuracy on late devices")
        axes[1, col].set_ylabel(r"cost on late devices / $\phi^*$ there")
        axes[1, col].set_xlabel("fraction of devices joining after the fit")
    figure_legend(fig, axes)
    return fig


def heterogeneity(runs: pd.DataFrame):
    """From the natural partition (0) to IID (1): k-FED's cost over ``phi*`` and the number of
    oracle clusters per device.

    Its tables are written by :func:`~fedclust.papers.kfed.federated.run_experiment`.
    """
    fig, axes = new_figure(ncols=2, width=3.4, height=2.7)
    for ds in _datasets(runs):
        sub = runs[runs["dataset"] == ds]
        label = f"{dataset_title(sub, ds)} (k={_oracle_k(sub, ds)})"
        _mean_std_line(axes[0, 0], sub, "mix_fraction", "cost_over_oracle", label=label)
        _mean_std_line(axes[0, 1], sub, "mix_fraction", "clusters_per_device_5pct", label=label)
    axes[0, 0].set_ylabel(r"k-FED cost / $\phi^*$")
    axes[0, 1].set_ylabel("oracle clusters per device\n(holding > 5% of its rows)")
    for ax in axes[0]:
        ax.set_xlabel("fraction of rows moved to random devices")
    figure_legend(fig, axes)
    fig.suptitle("k-FED from the natural partition towards IID")
    return fig


_METHODS = {"global": ("0.45", "Global (FedAvg)"), "ifca": ("tab:orange", "IFCA"),
            "kfed": ("tab:blue", "k-FED + FedAvg")}
#: How a Table 2 panel's notes name the methods.
_SHORT = {"global": "Global", "ifca": "IFCA", "kfed": "k-FED"}
_STRATEGIES = {"random": ("0.45", "random"), "powd": ("tab:orange", "pow-d"),
               "kfed_powd": ("tab:blue", "k-FED + pow-d")}
#: Line styles by label: curves that coincide (IFCA on k-FED in Table 2) stay visible, the
#: dashed one drawn over the solid one.
_LINESTYLES = {"IFCA": (0, (4, 2)), "pow-d": (0, (4, 2)), "Global (FedAvg)": ":",
               "random": ":"}


def _curve(ax, table: pd.DataFrame, metric: str, color, label) -> None:
    stats = summarize_runs(table, metric, ["round"])
    dashed = label in _LINESTYLES
    ax.plot(stats["round"], stats["mean"], color=color, lw=1.3, label=label,
            ls=_LINESTYLES.get(label, "-"), zorder=3 if dashed else 2)
    ax.fill_between(stats["round"], stats["mean"] - stats["std"], stats["mean"] + stats["std"],
                    color=color, alpha=0.2, lw=0)


def _final(table: pd.DataFrame, metric: str) -> float | None:
    values = table.loc[table["metric"] == metric, "value"]
    return float(values.mean()) if len(values) else None


#: The share of a Table 2 panel's height kept under the trained curves for its notes.
_NOTES_HEIGHT = 0.36


def _trained_view(table: pd.DataFrame) -> tuple[tuple, tuple] | None:
    """x- and y-limits of the trained models: every evaluation after the first (the untrained
    models' accuracy, near chance, falls outside), every method's mean test accuracy ± its
    spread in the upper part of the panel, the lower :data:`_NOTES_HEIGHT` left free for the
    panel's notes; None where only one round was evaluated."""
    acc = table[table["metric"] == "test_accuracy"]
    trained = acc[acc["round"] > acc["round"].min()]
    if trained.empty:
        return None
    stats = summarize_runs(trained, "test_accuracy", ["n_devices", "device_clusters",
                                                      "method", "round"])
    low, high = (stats["mean"] - stats["std"]).min(), (stats["mean"] + stats["std"]).max()
    span = max(high - low, 0.01) / (1.0 - _NOTES_HEIGHT - 0.06)
    first, last = trained["round"].min(), trained["round"].max()
    margin = 0.03 * max(last - first, 1)
    return (first - margin, last + margin), (high + 0.04 * span - span, high + 0.04 * span)


def table2_rotated_mnist(table: pd.DataFrame):
    """Test accuracy against rounds, one panel per (k', Z), one curve per method, every panel
    on the same axes zoomed to the trained models (:func:`_trained_view`); each panel notes the
    methods' final accuracies, IFCA's identity accuracy and k-FED's clustering accuracy.

    Its tables are written by :func:`~fedclust.papers.kfed.applications.table2_runs`.
    """
    table = table[table["metric"] != "skipped"]
    if table.empty:
        raise ValueError("the Table 2 table has no finished run")
    view = _trained_view(table)
    cells = table[["device_clusters", "n_devices"]].drop_duplicates().sort_values(
        ["device_clusters", "n_devices"])
    kps, zs = sorted(cells["device_clusters"].unique()), sorted(cells["n_devices"].unique())
    fig, axes = new_figure(len(zs), len(kps), width=3.2, height=2.5)
    for i, kp in enumerate(kps):
        for j, z in enumerate(zs):
            ax = axes[i, j]
            cell = table[(table["device_clusters"] == kp) & (table["n_devices"] == z)]
            notes, finals = [], []
            for method, (color, label) in _METHODS.items():
                part = cell[cell["method"] == method]
                if part[part["metric"] == "test_accuracy"].empty:
                    continue
                _curve(ax, part, "test_accuracy", color, label)
                last = part[part["round"] == part["round"].max()]
                finals.append(f"{_SHORT[method]} {_final(last, 'test_accuracy'):.3f}")
                identity = _final(last, "identity_accuracy")
                if identity is not None:
                    notes.append(f"IFCA identity {identity:.2f}")
                clustering = _final(part, "kfed_cluster_accuracy")
                if clustering is not None:
                    notes.append(f"k-FED clusters {clustering:.2f}")
            ax.set_title(f"Z = {z}, k' = {kp}")
            ax.set_xlabel("round")
            ax.set_ylabel("test accuracy")
            if view is not None:
                ax.set_xlim(*view[0])
                ax.set_ylim(*view[1])
            notes = ["final: " + ", ".join(finals)] + notes if finals else notes
            if notes:
                ax.text(0.97, 0.05, "\n".join(notes), transform=ax.transAxes, ha="right",
                        va="bottom", fontsize=7)
    figure_legend(fig, axes)
    fig.suptitle(f"k-FED Table 2, rotated MNIST: {table['run'].nunique()} run(s)")
    return fig


def fig4_client_selection(*tables: pd.DataFrame):
    """Test accuracy and training loss against rounds per strategy (history tables) and the
    final test accuracy per device (device tables).

    Its tables are written by :func:`~fedclust.papers.kfed.applications.fig4_runs`.
    """
    history = pd.concat([t for t in tables if "round" in t.columns], ignore_index=True)
    devices = pd.concat([t for t in tables if "device" in t.columns], ignore_index=True)
    history = history[history["metric"] != "skipped"]
    if history.empty:
        raise ValueError("the Fig 4 tables have no finished run")
    fig, axes = new_figure(3, 1, width=3.0, height=2.6)
    for strategy, (color, label) in _STRATEGIES.items():
        part = history[history["strategy"] == strategy]
        if part.empty:
            continue
        _curve(axes[0, 0], part, "test_accuracy", color, label)
        _curve(axes[0, 1], part, "train_loss", color, label)
        accs = devices.loc[(devices["strategy"] == strategy)
                           & (devices["metric"] == "test_accuracy"), "value"]
        axes[0, 2].hist(accs, bins=np.linspace(0, 1, 21), histtype="step", color=color,
                        lw=1.3, label=f"{label} (var {np.var(accs):.3f})", density=True)
    for ax, what in zip(axes[0], ("test accuracy", "training loss"), strict=False):
        ax.set_xlabel("round")
        ax.set_ylabel(what)
    axes[0, 2].set_xlabel("final test accuracy of a device")
    axes[0, 2].set_ylabel("density")
    figure_legend(fig, axes[0, :2])
    panel_legend(axes[0, 2], loc="upper center", bbox_to_anchor=(0.5, -0.3))
    dataset = history["dataset"].iloc[0]
    fig.suptitle(f"k-FED Fig 4, {dataset}: client selection, {history['run'].nunique()} runs")
    return fig

"""The Flower runs' figure (:mod:`fedclust.runtime.flower`): bytes by what counts them, and
the cost against the in-process fit, from the tidy table alone."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..vocabulary import ALGORITHM_TITLES, algorithm_rank
from ._style import new_figure

__all__ = ["BYTE_LAYERS", "plot_flower_bytes"]

#: What each bar counts, from the ledger out to the wire (metric of the table, label).
BYTE_LAYERS = (
    ("ledger_bytes", "ledger"),
    ("payload_ledger_bytes", "payload: ledger's records"),
    ("payload_bytes", "payload: all the algorithm sends"),
    ("wire_bytes", "wire (TCP streams)"),
)


def plot_flower_bytes(table: pd.DataFrame):
    """Left: bytes per algorithm as the ledger, Flower's payload and the wire count them (log
    scale; one run per algorithm, the run without lost devices when there is one). Right: the
    Flower run's k-means cost over the in-process fit's (1: the same clustering), its
    difference from 1 written above each bar."""
    runs = table[table["scope"] == "run"]
    chosen = []
    # the vocabulary's order of algorithms, any other by name after them
    by_name = runs.sort_values("algorithm", kind="stable")
    for algorithm, rows in by_name.sort_values("algorithm", key=algorithm_rank,
                                               kind="stable").groupby("algorithm", sort=False):
        intact = rows[rows["lost_devices"].fillna("").astype(str) == ""]
        chosen.append((algorithm, intact if len(intact) else rows))
    # two-word titles on two lines: four algorithms side by side in a 3.6-inch panel
    names = [ALGORITHM_TITLES.get(name, name).replace(" ", "\n", 1) for name, _ in chosen]
    fig, axes = new_figure(ncols=2, width=3.6)
    bytes_ax, cost_ax = axes[0]
    width = 0.8 / len(BYTE_LAYERS)
    x = np.arange(len(chosen))
    for i, (metric, label) in enumerate(BYTE_LAYERS):
        values = [rows.loc[rows["metric"] == metric, "value"].mean() for _, rows in chosen]
        bytes_ax.bar(x + (i - (len(BYTE_LAYERS) - 1) / 2) * width, values, width, label=label)
    bytes_ax.set_yscale("log")
    bytes_ax.set_xticks(x, names)
    for ax in axes[0]:
        ax.tick_params(axis="x", labelsize="small")
    bytes_ax.set_ylabel("bytes per fit")
    nodes = sorted({int(n) for _, rows in chosen for n in rows["n_nodes"]})
    bytes_ax.set_title(f"bytes, {', '.join(map(str, nodes))} SuperNodes")
    cost_ax.set_title("k-means cost")
    fig.legend(loc="outside upper center", ncols=len(BYTE_LAYERS), fontsize=8)
    ratios = []
    for _, rows in chosen:
        flower = rows.loc[rows["metric"] == "cost_flower", "value"].mean()
        in_process = rows.loc[rows["metric"] == "cost_in_process", "value"].mean()
        ratios.append(flower / in_process)
    cost_ax.bar(x, ratios, 0.5, color="0.5")
    cost_ax.axhline(1.0, color="k", lw=0.8)
    cost_ax.set_xticks(x, names)
    cost_ax.set_ylabel("cost on Flower / in process")
    for xi, ratio in zip(x, ratios, strict=True):  # the difference, invisible as a bar
        cost_ax.annotate(f"{ratio - 1:+.1e}", (xi, ratio), ha="center", va="bottom",
                         fontsize=8)
    return fig

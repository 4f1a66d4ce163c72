import numpy as np
import pandas as pd
import pytest

from fedclust.plots._style import save_figure
from fedclust.plots.kfed import (plot_accuracy_vs_separation, plot_separation_distribution,
                                 summarize_runs, table1_markdown)


def mixture_runs():
    rows = []
    for d, k in [(10, 4), (20, 9)]:
        for c in [0.1, 1.0, 10.0]:
            for run in range(3):
                acc = min(1.0, c) - 0.01 * run
                rows.append(dict(experiment="fig1", n_features=d, n_clusters=k,
                                 device_clusters=int(np.sqrt(k)), devices_per_cluster=5,
                                 separation=c, run=run, metric="accuracy", value=acc))
                rows.append(dict(experiment="fig1", n_features=d, n_clusters=k,
                                 device_clusters=int(np.sqrt(k)), devices_per_cluster=5,
                                 separation=c, run=run, metric="n_devices", value=10))
    return pd.DataFrame(rows)


def test_summarize_runs_mean_std():
    s = summarize_runs(mixture_runs(), "accuracy", ["n_features", "separation"])
    row = s[(s.n_features == 10) & (s.separation == 0.1)].iloc[0]
    assert row["mean"] == pytest.approx(np.mean([0.1, 0.09, 0.08])) and row["n_runs"] == 3
    assert row["std"] == pytest.approx(np.std([0.1, 0.09, 0.08], ddof=1))


def test_figure1_has_one_line_per_setting(tmp_path):
    fig = plot_accuracy_vs_separation(mixture_runs())
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 2 + 1  # two settings and the c = 1 guide
    assert ax.get_xscale() == "log"
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"


def test_table1_markdown_lists_every_setting():
    runs = mixture_runs()
    runs = runs[runs.separation == 10.0]
    paper = pd.DataFrame({"n_features": [10], "n_clusters": [4], "paper_value": [1.0]})
    text = table1_markdown(runs, paper)
    lines = text.strip().splitlines()
    assert len(lines) == 4
    assert "| 10 | 4 | 2 | 5 | 10 | 10 | 3 | 0.990 ± 0.010 | 1.00 |" in lines
    assert lines[-1].endswith("n/a |")


def test_figure5_marks_the_chosen_k():
    pairs = pd.DataFrame({"n_clusters": [2, 3, 3, 3], "value": [0.7, 0.6, 0.4, 0.55]})
    summary = pd.DataFrame({"dataset": ["toy", "toy"], "n_samples": [100, 100],
                            "n_clusters": [2, 3], "device_clusters": [1, 1],
                            "devices_per_cluster": [1, 1], "share_above": [1.0, 2 / 3],
                            "chosen": [True, False]})
    fig = plot_separation_distribution(pairs, summary, threshold=0.5)
    assert "chosen k = 2" in [t.get_text() for t in fig.axes[1].get_legend().get_texts()]

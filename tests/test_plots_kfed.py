import numpy as np
import pandas as pd
import pytest

from fedclust.papers.kfed.figures import (
    fig1_accuracy_vs_separation,
    fig2_structured_vs_iid,
    fig5_separation,
    summarize_runs,
    table1_markdown,
    table1_report,
)
from fedclust.plots._style import save_figure


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
    fig = fig1_accuracy_vs_separation(mixture_runs())
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 2 + 1  # two settings and the c = 1 guide
    assert ax.get_xscale() == "log"
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"


def test_a_figure_drawn_twice_gives_the_same_bytes_pdf_included(tmp_path, monkeypatch):
    """Byte-reproducible outputs: no creation date in the PDF, whatever the clock says."""
    import time

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        save_figure(fig1_accuracy_vs_separation(mixture_runs()), tmp_path / run / "f.png",
                    tmp_path / run / "f.pdf")
        if run == "a":
            time.sleep(1.1)  # a creation date would change: PDF dates count seconds
    for name in ("f.png", "f.pdf"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert b"CreationDate" not in (tmp_path / "a" / "f.pdf").read_bytes()


def test_a_saved_figure_damaged_later_is_found_by_its_sidecar(tmp_path):
    """Every saved figure has its sha256 beside it: a PNG cut short afterwards is named and
    removed at the next run's start, so its rule draws it again."""
    from fedclust.io import remove_damaged_files, sha256_of, sidecar_of

    figure = tmp_path / "figures" / "f.png"
    save_figure(fig1_accuracy_vs_separation(mixture_runs()), figure, figure.with_suffix(".pdf"))
    for path in (figure, figure.with_suffix(".pdf")):
        assert sidecar_of(path).read_text().split()[0] == sha256_of(path)
    assert remove_damaged_files([tmp_path / "figures"]) == []
    figure.write_bytes(figure.read_bytes()[:100])
    (removed,) = remove_damaged_files([tmp_path / "figures"])
    assert removed.startswith(f"{figure}: sha256") and not figure.exists()
    assert figure.with_suffix(".pdf").exists()


def test_table1_markdown_lists_every_setting():
    runs = mixture_runs()
    runs = runs[runs.separation == 10.0]
    paper = pd.DataFrame({"n_features": [10], "n_clusters": [4], "paper_value": [1.0],
                          "paper_std": [0.0]})
    text = table1_markdown(runs, paper)
    lines = text.strip().splitlines()
    assert len(lines) == 4
    assert "| 10 | 4 | 2 | 5 | 10 | 10 | 3 | 99.00 ± 1.00 | 100.00 ± 0.00 |" in lines
    assert lines[-1].endswith("n/a |")
    targets = {"kfed": {"table1": {"rows": [{"n_features": 10, "n_clusters": 4, "value": 1.0,
                                             "std": 0.0}],
                                   "provenance": "Table 1 of the paper"}}}
    page = table1_report(runs, targets)
    assert page.startswith("# k-FED, Table 1") and page.rstrip().endswith("Table 1 of the paper")


def test_figure5_marks_the_chosen_k():
    pairs = pd.DataFrame({"n_clusters": [2, 3, 3, 3], "value": [0.7, 0.6, 0.4, 0.55]})
    summary = pd.DataFrame({"dataset": ["toy", "toy"], "data_title": ["Toy data"] * 2,
                            "n_samples": [100, 100], "threshold": [0.5, 0.5],
                            "n_clusters": [2, 3], "device_clusters": [1, 1],
                            "devices_per_cluster": [1, 1], "share_above": [1.0, 2 / 3],
                            "chosen": [True, False]})
    fig = fig5_separation(pairs, summary)
    assert "chosen k = 2" in [t.get_text() for t in fig.legends[0].get_texts()]
    # the threshold and the title come from the table
    assert fig.axes[0].get_lines()[-1].get_ydata()[0] == 0.5
    assert fig._suptitle.get_text().startswith("Separation of Toy data")


def tidy_rows(records, ids):
    wide = pd.DataFrame(records)
    return wide.melt(id_vars=ids, var_name="metric", value_name="value")


def test_fig2_fig3_and_beyond_figures_draw_every_dataset():
    from fedclust.papers.kfed.figures import (
        fig2_structured_vs_iid,
        fig3_kfed_vs_distributed_lloyd,
        heterogeneity,
        new_devices,
        participation,
    )
    ids = ["dataset", "n_clusters", "device_clusters", "run"]
    fig2 = tidy_rows([dict(dataset=ds, n_clusters=4, device_clusters=kp, run=r,
                           cost_gap_ratio=0.1 * kp, structured_cost_over_oracle=1.0,
                           iid_cost_over_oracle=1.1)
                      for ds in ("femnist", "b") for kp in (1, 2) for r in range(2)], ids)
    fig = fig2_structured_vs_iid(fig2)
    # known data sets get the registry's title, others are shown as they are
    assert [ax.get_title() for ax in fig.axes[:2]] == ["b (oracle k = 4)",
                                                       "FEMNIST (oracle k = 4)"]
    titled = fig2.assign(data_title=np.where(fig2.dataset == "b", "Bee data", "FEMNIST (LEAF)"))
    assert [ax.get_title() for ax in fig2_structured_vs_iid(titled).axes[:2]] == \
        ["Bee data (oracle k = 4)", "FEMNIST (LEAF) (oracle k = 4)"]
    assert fig.axes[0].get_yscale() == "symlog"
    fig3 = pd.concat([
        tidy_rows([dict(dataset="a", n_clusters=4, device_clusters=2, run=r, algorithm="k-FED",
                        cost_over_oracle=1.0, rounds=1, bytes=80,
                        # the tidy table has every metric for every algorithm: none here
                        seeding_rounds=np.nan, lloyd_rounds=np.nan) for r in range(2)],
                  ids + ["algorithm"]),
        tidy_rows([dict(dataset="a", n_clusters=4, device_clusters=2, run=r,
                        algorithm="distributed Lloyd", cost_over_oracle=1.0, rounds=38,
                        seeding_rounds=8, lloyd_rounds=30, bytes=9000) for r in range(2)],
                  ids + ["algorithm"])])
    fig = fig3_kfed_vs_distributed_lloyd(fig3)
    assert fig.axes[1].get_yscale() == "log"
    texts = {t.get_text() for t in fig.axes[1].texts}
    assert texts == {"1", "8+30"}  # the baseline's rounds split into seeding + Lloyd
    part = tidy_rows([dict(dataset="a", n_clusters=4, participation=p, run=0, accuracy=p,
                           cost_over_oracle=2 - p) for p in (0.5, 1.0)],
                     ["dataset", "n_clusters", "participation", "run"])
    assert len(participation(part).axes[0].get_lines()) == 1
    late = tidy_rows([dict(dataset="a", n_clusters=4, held_out=h, run=0, method=m,
                           held_out_accuracy=0.9, held_out_cost_over_oracle=1.01)
                      for h in (0.1, 0.5) for m in ("predict", "refit")],
                     ["dataset", "n_clusters", "held_out", "run", "method"])
    assert len(new_devices(late).axes[0].get_lines()) == 2
    het = tidy_rows([dict(dataset="a", n_clusters=4, mix_fraction=f, run=0,
                          cost_over_oracle=1 + f, clusters_per_device_5pct=1 + 3 * f)
                     for f in (0.0, 1.0)], ["dataset", "n_clusters", "mix_fraction", "run"])
    assert heterogeneity(het).axes[1].get_lines()[0].get_ydata().tolist() == [1.0, 4.0]


def test_fig3_tick_labels_do_not_overlap_with_many_settings():
    from fedclust.papers.kfed.figures import fig3_kfed_vs_distributed_lloyd
    ids = ["dataset", "n_clusters", "device_clusters", "run"]
    # as on real data: costs within 0.1% of phi*, bytes over four decades
    fig3 = tidy_rows([dict(dataset=ds, n_clusters=10, device_clusters=kp, run=r,
                           algorithm=al, cost_over_oracle=1.0002 + 0.0003 * r + 0.0001 * kp,
                           rounds=1, bytes=10.0 ** (4 + 4 * (al == "distributed Lloyd") + kp / 5))
                      for ds in ("femnist", "shakespeare") for kp in range(1, 9)
                      for al in ("k-FED", "k-FED (server to convergence)") for r in range(2)],
                     ids + ["algorithm"])
    fig = fig3_kfed_vs_distributed_lloyd(fig3)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
        assert len(boxes) == 8
        gap = 0.1 * fig.dpi  # a tenth of an inch between neighbouring labels
        gaps = [b.x0 - a.x1 for a, b in zip(boxes[:-1], boxes[1:], strict=True)]
        assert min(gaps) >= gap, ax.get_title()
    # a ratio near 1 is printed as such, not as an offset ("+1") and a small remainder
    assert all(not ax.yaxis.get_major_formatter().get_offset() for ax in fig.axes)


def test_points_holding_fewer_runs_are_labelled_with_their_count():
    ids = ["dataset", "n_clusters", "device_clusters", "run"]
    rows = [dict(dataset="a", n_clusters=4, device_clusters=kp, run=r, cost_gap_ratio=0.1,
                 structured_cost_over_oracle=1.0, iid_cost_over_oracle=1.1)
            for kp in (1, 2) for r in range(3) if not (kp == 2 and r > 0)]
    fig = fig2_structured_vs_iid(tidy_rows(rows, ids))
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels == ["n=1"]  # k' = 2 holds one of three runs, k' = 1 all three


def test_figure1_labels_a_separation_whose_runs_were_skipped():
    runs = mixture_runs()
    # one run of (d=10, c=0.1) was infeasible: its row is kept as skipped (no value)
    skipped = (runs.n_features == 10) & (runs.separation == 0.1) & (runs.run == 2)
    runs.loc[skipped, "value"] = np.nan
    fig = fig1_accuracy_vs_separation(runs)
    assert [t.get_text() for t in fig.axes[0].texts] == ["n=2"]
    assert "3 runs per point" in fig.axes[0].get_title()


@pytest.mark.parametrize("low, high, expected", [
    (1.7e7, 8e7, [2e7, 5e7]),        # less than a decade: 1, 2 and 5 times a power of ten
    (2.01e6, 9.7e6, [3e6, 5e6]),     # only one of those inside: 3 joins them
    (3e2, 8e5, None),                # three decades: matplotlib's own labels stay
])
def test_a_short_log_axis_is_labelled_without_overlaps(low, high, expected):
    import matplotlib.pyplot as plt

    from fedclust.plots._style import log_ticks

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    before = ax.xaxis.get_major_locator()
    log_ticks(ax.xaxis)
    if expected is None:
        assert ax.xaxis.get_major_locator() is before
    else:
        assert list(ax.xaxis.get_major_locator().tick_values(low, high)) == expected
        fig.canvas.draw()
        assert [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()] == []
    plt.close(fig)


def table2_table():
    """Two runs of every method in two cells, evaluated at rounds 0, 100 and 200: chance at
    round 0, then the trained accuracies."""
    trained = {"global": (0.90, 0.93), "ifca": (0.94, 0.96), "kfed": (0.95, 0.97)}
    rows = []
    for z in (100, 200):
        for method, (mid, end) in trained.items():
            for run in range(2):
                for rnd, acc in ((0, 0.1), (100, mid), (200, end)):
                    rows.append(dict(n_devices=z, device_clusters=1, method=method, run=run,
                                     round=rnd, metric="test_accuracy",
                                     value=acc + 0.002 * run))
    return pd.DataFrame(rows)


def test_table2_shows_the_trained_models_with_their_final_accuracies():
    from fedclust.papers.kfed.figures import table2_rotated_mnist
    from fedclust.plots._style import layout_problems

    table = table2_table()
    fig = table2_rotated_mnist(table)
    trained = table[table["round"] > 0]
    for ax in fig.axes[:2]:
        low, high = ax.get_ylim()
        # round 0 (chance) lies below; every trained mean and its spread inside
        assert 0.1 < low < trained["value"].min() and high > trained["value"].max()
        assert ax.get_xlim()[0] > 0
        notes = " ".join(text.get_text() for text in ax.texts)
        assert "final: Global 0.931, IFCA 0.961, k-FED 0.971" in notes
    assert layout_problems(fig) == []

"""The figure layout check: what does not read is found, a figure that reads passes."""

import hashlib

import numpy as np

from fedclust.plots._style import layout_problems, new_figure, plt, save_figure


def test_a_clean_figure_has_no_layout_problem():
    fig, axes = new_figure()
    ax = axes[0, 0]
    x = np.linspace(0, 1, 20)
    ax.plot(x, x, label="rising")
    ax.plot(x, 1 - x, label="falling")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    assert layout_problems(fig) == []
    plt.close(fig)


def test_a_legend_over_data_small_legend_text_and_crowded_ticks_are_found():
    fig, axes = new_figure()
    ax = axes[0, 0]
    x = np.linspace(0, 1, 50)
    ax.plot(x, np.full_like(x, 0.5), label="flat")
    ax.legend(loc="center", fontsize=6)
    ax.set_xticks(np.linspace(0, 1, 30))
    ax.set_xticklabels([f"{v:.4f}" for v in np.linspace(0, 1, 30)])
    problems = layout_problems(fig)
    assert any("legend covers" in p for p in problems)
    assert any("legend text under 8 pt" in p for p in problems)
    assert any("x tick labels" in p and "overlap" in p for p in problems)
    plt.close(fig)


def test_panel_titles_that_run_into_each_other_are_found():
    fig, axes = new_figure(2)
    for ax in axes[0]:
        ax.plot([0, 1], [0, 1])
        ax.set_title("a title far too long for its narrow panel, running on", loc="left")
    assert any("titles" in p and "overlap" in p for p in layout_problems(fig))
    plt.close(fig)


def _labelled_figure():
    fig, axes = new_figure(2)
    for i, ax in enumerate(axes[0]):
        ax.plot([0, 1], [0, 10 ** (3 * i)], label=f"line {i}")
        ax.set_ylabel("a long label that the layout makes room for" if i else "y")
    fig.legend(loc="outside lower center")
    return fig


def test_every_format_is_saved_from_the_layout_the_check_drew(tmp_path):
    fig = _labelled_figure()
    unlaid = [ax.get_position().bounds for ax in fig.axes]
    assert layout_problems(fig) == []
    checked = [ax.get_position().bounds for ax in fig.axes]
    assert checked != unlaid  # the check's draw laid the panels out
    save_figure(fig, tmp_path / "a.png", tmp_path / "a.pdf")
    assert [ax.get_position().bounds for ax in fig.axes] == checked
    for name in ("a.png", "a.pdf"):
        sidecar = (tmp_path / f"{name}.sha256").read_text().split()[0]
        assert sidecar == hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
    # a figure saved without a check first is laid out the same; the bytes repeat
    other = _labelled_figure()
    save_figure(other, tmp_path / "b.png", tmp_path / "b.pdf")
    assert [ax.get_position().bounds for ax in other.axes] == checked
    for fmt in ("png", "pdf"):
        assert (tmp_path / f"a.{fmt}").read_bytes() == (tmp_path / f"b.{fmt}").read_bytes()
    plt.close("all")

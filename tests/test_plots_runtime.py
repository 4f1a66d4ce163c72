"""The Flower runs' figure (fedclust.plots.runtime) from a measurements table it is handed."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from fedclust.plots.runtime import BYTE_LAYERS, plot_flower_bytes  # noqa: E402


def _run(algorithm, lost, ledger, cost_flower):
    metrics = {"ledger_bytes": ledger, "payload_ledger_bytes": 2 * ledger,
               "payload_bytes": 3 * ledger, "wire_bytes": 50 * ledger,
               "cost_flower": cost_flower, "cost_in_process": 10.0}
    return [{"algorithm": algorithm, "n_nodes": 10, "lost_devices": lost, "scope": "run",
             "key": "", "metric": metric, "value": value} for metric, value in metrics.items()]


def test_flower_figure_shows_the_intact_run_of_each_algorithm_in_the_vocabulary_order():
    import matplotlib.pyplot as plt

    table = pd.DataFrame(_run("fedkmeans", None, 800.0, 10.0)
                         + _run("kfed", "2", 5.0, 13.0) + _run("kfed", None, 96.0, 10.0))
    fig = plot_flower_bytes(table)
    bytes_ax, cost_ax = fig.axes[:2]
    labels = [t.get_text() for t in bytes_ax.get_xticklabels()]
    assert labels == ["k-FED", "federated\nk-means"]  # vocabulary order, titles
    ledger_bars = bytes_ax.containers[0]
    assert [bar.get_height() for bar in ledger_bars] == [96.0, 800.0]  # not the fault run
    assert len(bytes_ax.containers) == len(BYTE_LAYERS)
    assert [bar.get_height() for bar in cost_ax.containers[0]] == pytest.approx([1.0, 1.0])
    assert [t.get_text() for t in cost_ax.texts] == ["+0.0e+00", "+0.0e+00"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        label for _, label in BYTE_LAYERS]
    plt.close(fig)

"""k-FED's applications as experiments: Table 2 cells and Fig 4 curves on small data."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from fedclust.exceptions import InfeasibleSettingError  # noqa: E402
from fedclust.experiments.kfed_applications import (  # noqa: E402
    FLData,
    fig4_runs,
    rotated_mnist,
    table2_runs,
)


def _images(n, seed):
    """Digits-like 28x28 images: a bright top-left corner (so each rotation moves it to its
    own corner) and the class as a bright row."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.uniform(0, 0.1, size=(n, 28, 28)).astype(np.float32)
    X[:, :6, :6] = 1.0
    X[np.arange(n), 10 + 4 * y, 8:20] = 1.0
    return X.reshape(n, 784), y


CFG = {"model": "mlp", "model_options": {"hidden": 8, "n_classes": 3}, "lr": 0.1,
       "local_steps": 2, "batch_size": 4, "aggregation": "size", "loss_rows": 8,
       "devices_per_round": 4, "rounds": 3, "eval_every": 2, "per_rotation": 80,
       "test_per_rotation": 16, "pairing": "adjacent", "eval_train_rows": None,
       "eval_test_rows": None, "kfed": {"server_lloyd_rounds": 1}, "runs": 2}


@pytest.fixture(scope="module")
def mnist():
    return _images(200, 0), _images(40, 1)


def test_rotated_mnist_deals_k_prime_rotations_per_device(mnist):
    train, test = mnist
    data = rotated_mnist(train, test, n_devices=8, device_clusters=2, pairing="adjacent",
                         per_rotation=80, test_per_rotation=16, seed=0)
    assert len(data.y) == 320 and len(data.test_y) == 64
    for z in range(8):
        held = set(data.clusters[data.devices == z])
        assert held in ({0, 1}, {2, 3})                       # adjacent pairs
    # every test row sits on a device holding its rotation
    test_rot = np.repeat(np.arange(4), 16)
    for z in range(8):
        assert set(test_rot[data.test_devices == z]) <= set(data.clusters[data.devices == z])
    with pytest.raises(InfeasibleSettingError, match="multiple|whole number"):
        rotated_mnist(train, test, n_devices=6, device_clusters=1, pairing="adjacent",
                      per_rotation=80, test_per_rotation=16, seed=0)


@pytest.mark.parametrize("method", ["global", "ifca", "kfed"])
def test_a_table2_cell_reports_accuracy_and_communication(mnist, method):
    table = table2_runs(*mnist, n_devices=8, device_clusters=1, method=method, cfg=CFG,
                        base_seed=3)
    assert set(table.run) == {0, 1}
    history = table[table.metric == "test_accuracy"]
    assert sorted(set(history["round"])) == [0, 2, 3]
    assert history.value.between(0, 1).all()
    per_round = table[table.metric == "floats_down_per_round"].value
    models = {"global": 1, "ifca": 4, "kfed": 1}[method]
    assert (per_round == models * 4 * (784 * 8 + 8 + 8 * 3 + 3)).all()
    if method == "kfed":      # rotations moving a bright corner are found exactly
        assert (table[table.metric == "kfed_cluster_accuracy"].value == 1.0).all()
    if method == "ifca":
        assert table.metric.eq("identity_accuracy").any()


def test_the_data_of_a_run_does_not_depend_on_the_method(mnist):
    a = table2_runs(*mnist, n_devices=8, device_clusters=1, method="global", cfg=CFG,
                    base_seed=3)
    b = table2_runs(*mnist, n_devices=8, device_clusters=1, method="global",
                    cfg={**CFG, "runs": 1}, base_seed=3)
    pd.testing.assert_frame_equal(a[a.run == 0].reset_index(drop=True), b)


def _fl_data(seed=0):
    rng = np.random.default_rng(seed)
    n_devices = 12
    sizes = rng.integers(8, 30, n_devices)
    devices = np.repeat(np.arange(n_devices), sizes)
    y = (devices % 3 + rng.integers(0, 2, len(devices))) % 3
    X = (np.eye(3)[y] * 2 + rng.normal(scale=0.5, size=(len(y), 3))).astype(np.float32)
    test = rng.random(len(y)) < 0.25
    return FLData(X[~test], y[~test], devices[~test], X[test], y[test], devices[test],
                  np.full((~test).sum(), -1), X[~test])


@pytest.mark.parametrize("strategy", ["random", "powd", "kfed_powd"])
def test_a_fig4_curve_has_history_and_per_device_accuracy(strategy):
    data = _fl_data()
    cfg = {"model": "mlp", "model_options": {"d_in": 3, "hidden": 6, "n_classes": 3},
           "lr": 0.3, "local_steps": 2, "batch_size": 4, "aggregation": "uniform",
           "loss_rows": 5, "devices_per_round": 3, "candidates": 6, "rounds": 4,
           "eval_every": 2, "runs": 2, "eval_train_rows": None, "eval_test_rows": 3,
           "kfed": {"n_clusters": 3, "device_clusters": 1, "server_lloyd_rounds": "converge"}}
    history, devices = fig4_runs("toy", strategy, data, cfg, base_seed=0)
    assert set(history.strategy) == {strategy} and set(history.run) == {0, 1}
    assert {"test_accuracy", "train_loss", "device_accuracy_variance"} <= set(history.metric)
    acc = devices[devices.metric == "test_accuracy"]
    assert acc.value.between(0, 1).all() and set(acc.run) == {0, 1}
    assert set(devices.device) <= set(range(12))
    assert devices[devices.metric == "n_test"].value.between(1, 3).all()
    up = history[(history.metric == "floats_up") & (history["round"] == 4)].value
    size = 3 * 6 + 6 + 6 * 3 + 3
    queries = 0 if strategy == "random" else 4 * 6              # one loss value per candidate
    assert (up == 4 * 3 * size + queries).all()
    if strategy == "kfed_powd":
        assert history.metric.eq("kfed_device_clusters_used").any()

"""k-FED's applications as experiments: Table 2 cells and Fig 4 curves on small data."""

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from fedclust.exceptions import InfeasibleSettingError  # noqa: E402
from fedclust.fl.data import DeviceStore  # noqa: E402
from fedclust.fl.models import MLP  # noqa: E402
from fedclust.fl.selection import RandomBySize  # noqa: E402
from fedclust.fl.stacked import StackedModel  # noqa: E402
from fedclust.fl.training import FederatedTrainer  # noqa: E402
from fedclust.metrics import clustering_accuracy  # noqa: E402
from fedclust.papers.kfed.applications import (  # noqa: E402
    FLData,
    _majority,
    fig4_runs,
    rotated_mnist,
    table2_runs,
)

pytestmark = pytest.mark.usefixtures("torch_one_thread")


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
       "eval_test_rows": None, "kfed": {"server_lloyd_rounds": 1, "server_starts": 1},
       "runs": 2}


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


def test_every_pair_deals_the_six_pairs_in_turn(mnist):
    train, test = mnist
    data = rotated_mnist(train, test, n_devices=8, device_clusters=2, pairing="every_pair",
                         per_rotation=80, test_per_rotation=16, seed=0)
    pairs = [{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {0, 1}, {0, 2}]
    test_rot = np.repeat(np.arange(4), 16)
    for z, pair in enumerate(pairs):
        assert set(data.clusters[data.devices == z]) == pair
        assert set(test_rot[data.test_devices == z]) <= pair
    # each rotation's 80 rows dealt evenly over the devices holding it (rotation 0: 5 of them)
    counts = np.bincount(data.devices[data.clusters == 0], minlength=8)
    assert sorted(counts[counts > 0]) == [16] * 5
    with pytest.raises(InfeasibleSettingError, match="6 pairs"):
        rotated_mnist(train, test, n_devices=4, device_clusters=2, pairing="every_pair",
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
    training = table[table.metric == "floats_down_per_training_round"].value
    assert (training.to_numpy() == per_round.to_numpy()).all()   # no restarts: all training
    if method == "kfed":      # rotations moving a bright corner are found exactly
        assert (table[table.metric == "kfed_cluster_accuracy"].value == 1.0).all()
    if method == "ifca":     # every device's choice, at every evaluation of every run
        for metric in ("identity_accuracy", "ifca_models_used", "round_identity_accuracy"):
            rows = table[table.metric == metric]
            rounds = (2, 3) if metric == "round_identity_accuracy" else (0, 2, 3)
            assert set(zip(rows.run, rows["round"], strict=True)) == {
                (r, t) for r in (0, 1) for t in rounds}
        assert table[table.metric == "identity_accuracy"].value.between(0.25, 1).all()


def test_the_data_of_a_run_does_not_depend_on_the_method(mnist):
    a = table2_runs(*mnist, n_devices=8, device_clusters=1, method="global", cfg=CFG,
                    base_seed=3)
    b = table2_runs(*mnist, n_devices=8, device_clusters=1, method="global",
                    cfg={**CFG, "runs": 1}, base_seed=3)
    pd.testing.assert_frame_equal(a[a.run == 0].reset_index(drop=True), b)


@pytest.fixture
def init_spy(monkeypatch):
    """Every initial stack a run draws, as (number of models, seed, stack)."""
    calls = []
    init = StackedModel.init

    def spy(self, n_models, seed, device=None):
        stack = init(self, n_models, seed, device)
        calls.append((n_models, seed, stack))
        return stack

    monkeypatch.setattr(StackedModel, "init", spy)
    return calls


def test_the_methods_of_a_run_start_from_the_same_model(mnist, init_spy):
    firsts = {}
    for method in ("global", "ifca", "kfed"):
        init_spy.clear()
        table2_runs(*mnist, n_devices=8, device_clusters=1, method=method,
                    cfg={**CFG, "ifca_restarts": 3, "ifca_restart_rounds": 2}, base_seed=3)
        # one start per run; IFCA draws three per run, the first is the run's own
        own = (0, 3) if method == "ifca" else (0, 1)
        assert len(init_spy) == own[1] * 2
        firsts[method] = [init_spy[i][2]["fc1.weight"][0] for i in own]
    for run in (0, 1):
        assert torch.equal(firsts["global"][run], firsts["ifca"][run])
        assert torch.equal(firsts["global"][run], firsts["kfed"][run])
    assert not torch.equal(firsts["global"][0], firsts["global"][1])


def test_ifca_restarts_reach_the_table(mnist):
    table = table2_runs(*mnist, n_devices=8, device_clusters=1, method="ifca",
                        cfg={**CFG, "ifca_restarts": 3, "ifca_restart_rounds": 2},
                        base_seed=3)
    kept = table[table.metric == "ifca_restart_kept"]
    assert set(kept.run) == {0, 1} and kept.value.isin([0, 1, 2]).all()
    best = table[table.metric == "ifca_restart_objective_kept"].value.to_numpy()
    worst = table[table.metric == "ifca_restart_objective_worst"].value.to_numpy()
    assert (best <= worst).all()


def test_ifca_restarts_cost_apart_from_the_protocols_rounds(mnist):
    """Table 2's "one model instead of k" compares the protocols' rounds: once IFCA's
    restarts (ours) are over, a round sends its k models to each of its devices; the whole
    run's average carries the restarts too."""
    table = table2_runs(*mnist, n_devices=8, device_clusters=1, method="ifca",
                        cfg={**CFG, "ifca_restarts": 3, "ifca_restart_rounds": 1},
                        base_seed=3)
    size = 784 * 8 + 8 + 8 * 3 + 3
    training = table[table.metric == "floats_down_per_training_round"].value
    overall = table[table.metric == "floats_down_per_round"].value
    assert (training == 4 * 4 * size).all()
    assert (overall.to_numpy() > training.to_numpy()).all()


def test_ifca_restarts_keep_every_rotation_where_one_start_collapses(mirror):
    """Small rotated MNIST, 4 of 40 devices a round: from its own start IFCA ends with 3
    models for the 4 rotations (two rotations share one); the best of 24 starts after 30
    rounds (IFCA's objective, no labels) has one model per rotation."""
    from fedclust.data.mnist import load_mnist

    X, y = load_mnist(mirror / "mnist", "train")
    data = rotated_mnist((X[:1000], y[:1000]), (X[:100], y[:100]), n_devices=40,
                         device_clusters=1, pairing="adjacent", per_rotation=1000,
                         test_per_rotation=100, seed=0)
    store = DeviceStore.from_arrays(data.X, data.y, data.devices)
    true = _majority(data.clusters, data.devices, data.n_devices)
    trainer = FederatedTrainer(MLP(784, 32, 10), lr=0.1, local_steps=5, batch_size=10,
                               loss_rows=20, progress=False)
    used = {}
    for restarts in (1, 24):
        result = trainer.run(store, rounds=30, selection=RandomBySize(4), seed=0, n_models=4,
                             ifca=True, true_group=true, restarts=restarts, restart_rounds=30)
        choice = trainer.choose_models(result.models, store, np.arange(40),
                                       torch.Generator().manual_seed(0))
        used[restarts] = (len(np.unique(choice)), clustering_accuracy(true, choice))
    assert used[1][0] < 4 and used[1][1] < 1.0
    assert used[24] == (4, 1.0)


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


#: A Fig 4 config for the toy data of :func:`_fl_data` (3 features, 3 classes, 12 devices).
FIG4_CFG = {"model": "mlp", "model_options": {"d_in": 3, "hidden": 6, "n_classes": 3},
            "lr": 0.3, "local_steps": 2, "batch_size": 4, "aggregation": "uniform",
            "loss_rows": 5, "devices_per_round": 3, "candidates": 6, "rounds": 4,
            "eval_every": 2, "runs": 2, "eval_train_rows": None, "eval_test_rows": 3,
            "kfed": {"n_clusters": 3, "device_clusters": 1, "server_lloyd_rounds": "converge",
                     "server_starts": 1}}


@pytest.mark.parametrize("strategy", ["random", "powd", "kfed_powd"])
def test_a_fig4_curve_has_history_and_per_device_accuracy(strategy):
    data = _fl_data()
    cfg = FIG4_CFG
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


def test_the_strategies_of_a_run_start_from_the_same_model(init_spy):
    """Fig 4 compares strategies from the same initial model and data per run: their
    round-0 evaluations agree, and only the run changes the start."""
    data = _fl_data()
    cfg = {**FIG4_CFG, "rounds": 2, "eval_test_rows": None}
    starts, first_rows = {}, {}
    for strategy in ("random", "powd", "kfed_powd"):
        init_spy.clear()
        history, _ = fig4_runs("toy", strategy, data, cfg, base_seed=0)
        starts[strategy] = [(seed, stack) for _, seed, stack in init_spy]
        first_rows[strategy] = history[history["round"] == 0].drop(columns="strategy") \
            .reset_index(drop=True)
    for strategy in ("powd", "kfed_powd"):
        assert [s for s, _ in starts[strategy]] == [s for s, _ in starts["random"]]
        for (_, a), (_, b) in zip(starts[strategy], starts["random"], strict=True):
            assert all(torch.equal(a[n], b[n]) for n in a)
        pd.testing.assert_frame_equal(first_rows[strategy], first_rows["random"])
    (seed0, a), (seed1, b) = starts["random"]
    assert seed0 != seed1 and not torch.equal(a["fc1.weight"], b["fc1.weight"])


def test_strategies_on_one_data_set_equal_each_strategy_on_fresh_data():
    """A batched Fig 4 job (kfed.fig4.batch_strategies) trains every strategy on one loaded
    data set: no strategy may change the data or state the next one reads."""
    cfg = FIG4_CFG
    shared = _fl_data()
    for strategy in ("kfed_powd", "powd", "random"):
        together = fig4_runs("toy", strategy, shared, cfg, base_seed=0)
        alone = fig4_runs("toy", strategy, _fl_data(), cfg, base_seed=0)
        for a, b in zip(together, alone, strict=True):
            pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("profile", ["config.yaml", "ci.yaml"])
def test_ifca_restart_keys_are_validated_by_the_schema(profile):
    """Both profiles set IFCA's restarts; the schema fills them in and names a bad value."""
    import copy

    import yaml
    from snakemake.utils import update_config

    from fedclust.pipeline.config import ConfigError, validate_config

    from .conftest import REPO

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if profile != "config.yaml":
        update_config(config, yaml.safe_load((REPO / "config" / profile).read_text()))
    schema = REPO / "config" / "schema.yaml"
    table2 = config["kfed"]["table2"]
    assert table2["ifca_restarts"] > 1
    assert 1 <= table2["ifca_restart_rounds"] <= table2["rounds"]
    defaults = copy.deepcopy(config)
    for key in ("ifca_restarts", "ifca_restart_rounds"):
        del defaults["kfed"]["table2"][key]
    validate_config(defaults, schema)
    assert defaults["kfed"]["table2"]["ifca_restarts"] == 1        # one start by default
    config["kfed"]["table2"]["ifca_restarts"] = 0
    with pytest.raises(ConfigError, match="'kfed.table2.ifca_restarts': 0 is less than"):
        validate_config(config, schema)


def test_table2_cells_trained_together_equal_each_cell_trained_alone(mnist):
    # one stack for every run of every cell: on a CPU the batched products round as the
    # per-cell ones do, so the tables are equal bit for bit (the tolerance the GPU's batched
    # path is held to against its own per-cell runs is float32 rounding: tests/test_gpu.py)
    from fedclust.papers.kfed.applications import table2_cells

    cfg = {**CFG, "ifca_restarts": 2, "ifca_restart_rounds": 2}
    cells = [(8, 1, "global"), (8, 1, "ifca"), (8, 1, "kfed"), (8, 2, "global"),
             (8, 2, "kfed")]
    together = table2_cells(*mnist, cells=cells, cfg=cfg, base_seed=5)
    assert list(together) == cells
    for cell in cells:
        alone = table2_runs(*mnist, n_devices=cell[0], device_clusters=cell[1],
                            method=cell[2], cfg=cfg, base_seed=5)
        assert set(alone["run"]) == {0, 1}
        pd.testing.assert_frame_equal(together[cell], alone, check_exact=True)


def test_table2_cells_skip_an_infeasible_cell_and_train_the_others(mnist):
    from fedclust.papers.kfed.applications import table2_cells

    # 7 devices with k' = 1 cannot hold the 4 rotations one each evenly (7 * 1 / 4 devices)
    tables = table2_cells(*mnist, cells=[(7, 1, "global"), (8, 1, "global")], cfg=CFG,
                          base_seed=5)
    skipped, trained = tables[(7, 1, "global")], tables[(8, 1, "global")]
    assert set(skipped["metric"]) == {"skipped"}
    assert "test_accuracy" in set(trained["metric"])

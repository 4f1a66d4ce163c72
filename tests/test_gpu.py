"""The torch work on a CUDA GPU: the same seed gives the same numbers, the GPU agrees with the
CPU to float32 rounding over the first rounds, and jobs trained together equal each alone.

Skipped where torch sees no GPU (CI runs on CPUs). On a GPU machine:
``python -m pytest tests/test_gpu.py`` (benchmarks/gpu_machine.sh runs it with the
benchmark).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fedclust.fl.data import DeviceStore  # noqa: E402
from fedclust.fl.models import MLP, CharLSTM  # noqa: E402
from fedclust.fl.selection import PowerOfChoice, RandomBySize  # noqa: E402
from fedclust.fl.training import FederatedTrainer  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")

#: After this many rounds of Table 2's MLP, the CPU's and the GPU's models differ by at most
#: this much (float32 rounding of different kernels, grown by the rounds' SGD steps).
ROUNDS, PARAMETER_TOLERANCE = 10, 1e-4


def _store(seed=0, n_devices=20, rows=40):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n_devices * rows)
    X = (rng.uniform(0, 0.3, (len(y), 784)) + np.eye(10, 784)[y] * 3).astype(np.float32)
    return DeviceStore.from_arrays(X, y, np.repeat(np.arange(n_devices), rows))


def _trainer(device, model=None):
    return FederatedTrainer(model or MLP(784, 64, 10), lr=0.05, local_steps=5,
                            batch_size=10, loss_rows=20, progress=False, device=device)


def _max_difference(a, b):
    return max(float((a[n].cpu() - b[n].cpu()).abs().max()) for n in a)


def test_a_seed_gives_the_same_numbers_twice_on_the_gpu():
    runs = [_trainer("cuda").run(_store(), rounds=30, selection=RandomBySize(4), seed=3,
                                 n_models=3, ifca=True, restarts=3, restart_rounds=10,
                                 eval_every=10) for _ in range(2)]
    assert runs[0].history == runs[1].history
    assert runs[0].restart_scores == runs[1].restart_scores
    assert _max_difference(runs[0].models, runs[1].models) == 0.0


def test_the_gpu_agrees_with_the_cpu_to_float32_rounding():
    # the draws (initial models, devices, minibatch rows) are the CPU's on both devices
    cpu, gpu = (_trainer(d).run(_store(), rounds=ROUNDS, selection=RandomBySize(4), seed=5)
                for d in ("cpu", "cuda"))
    assert next(iter(gpu.models.values())).device.type == "cuda"
    assert [r.get("n_filled") for r in cpu.history] == [r.get("n_filled") for r in gpu.history]
    assert cpu.communication["floats_up"] == gpu.communication["floats_up"]
    assert _max_difference(cpu.models, gpu.models) <= PARAMETER_TOLERANCE


def test_pow_d_and_the_lstm_run_on_the_gpu_near_the_cpu():
    rng = np.random.default_rng(1)
    store = DeviceStore.from_arrays(rng.integers(0, 30, (400, 12)), rng.integers(0, 30, 400),
                                    np.arange(400) % 10)
    runs = [_trainer(d, CharLSTM(30, 4, 16)).run(store, rounds=4,
                                                 selection=PowerOfChoice(3, 6), seed=2)
            for d in ("cpu", "cuda")]
    assert _max_difference(runs[0].models, runs[1].models) <= PARAMETER_TOLERANCE


def test_jobs_trained_together_on_the_gpu_match_each_alone():
    trainer = _trainer("cuda")
    jobs = [dict(train=_store(s), rounds=8, selection=RandomBySize(4), seed=s)
            for s in range(3)]
    together = trainer.run_many(jobs)
    for job, result in zip(jobs, together, strict=True):
        assert _max_difference(result.models, trainer.run(**job).models) <= 1e-5


def test_table2_cells_on_the_gpu_rerun_identically_and_near_the_cpu():
    from fedclust.papers.kfed.applications import table2_cells

    rng = np.random.default_rng(0)

    def images(n):
        y = rng.integers(0, 3, n)
        X = rng.uniform(0, 0.1, size=(n, 28, 28)).astype(np.float32)
        X[:, :6, :6] = 1.0
        X[np.arange(n), 10 + 4 * y, 8:20] = 1.0
        return X.reshape(n, 784), y

    train, test = images(200), images(40)
    cfg = {"model": "mlp", "model_options": {"hidden": 8, "n_classes": 3}, "lr": 0.1,
           "local_steps": 2, "batch_size": 4, "aggregation": "size", "loss_rows": 8,
           "devices_per_round": 4, "rounds": 6, "eval_every": 3, "per_rotation": 80,
           "test_per_rotation": 16, "pairing": "adjacent", "eval_train_rows": None,
           "eval_test_rows": None, "kfed": {"server_lloyd_rounds": 1, "server_starts": 1},
           "runs": 2, "ifca_restarts": 2, "ifca_restart_rounds": 2}
    cells = [(8, 1, "global"), (8, 1, "ifca"), (8, 2, "kfed")]
    first, second = (table2_cells(train, test, cells=cells, cfg={**cfg, "device": "cuda"},
                                  base_seed=4) for _ in range(2))
    cpu = table2_cells(train, test, cells=cells, cfg=cfg, base_seed=4)
    for cell in cells:
        assert first[cell].equals(second[cell])
        a, b = first[cell], cpu[cell]
        assert list(a["metric"]) == list(b["metric"])
        # a prediction may flip on float32 rounding: accuracies within 2 of the 64 test rows
        accuracy = a["metric"].str.contains("accuracy").to_numpy()
        np.testing.assert_allclose(a["value"][accuracy], b["value"][accuracy], atol=2 / 64)
        np.testing.assert_allclose(a["value"][~accuracy], b["value"][~accuracy], rtol=1e-3)


def test_an_embedding_on_the_gpu_is_deterministic():
    from fedclust.embed import train_and_embed

    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, 600)
    X = rng.integers(0, 256, (600, 28, 28), dtype=np.uint8)
    X[np.arange(600), 2 * y + 3, :] = 255
    runs = [train_and_embed("mnist", X, y, X[:100], y[:100], epochs=1, batch_size=64,
                            seed=3, progress=False, device="cuda") for _ in range(2)]
    assert np.array_equal(runs[0].embeddings, runs[1].embeddings)
    assert runs[0].test_accuracy == runs[1].test_accuracy
    assert runs[0].params["device"] != "cpu"          # the GPU's name

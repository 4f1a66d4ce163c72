"""Federated training core (fedclust.fl): stacked models, stores, rounds and the ledger."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch.func import functional_call  # noqa: E402

from fedclust.fl.data import DeviceStore, rotate_images, split_per_device  # noqa: E402
from fedclust.fl.models import MLP, CharLSTM, build_model, n_parameters  # noqa: E402
from fedclust.fl.selection import RandomBySize  # noqa: E402
from fedclust.fl.stacked import StackedModel, average_by_group, take  # noqa: E402
from fedclust.fl.training import FederatedTrainer  # noqa: E402
from fedclust.partitions import powerlaw_class_partition  # noqa: E402
from fedclust.seeds import seed_for  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.parametrize("model, x", [
    (MLP(6, 5, 3), lambda: torch.randn(4, 7, 6)),
    (CharLSTM(vocab=11, embed=3, hidden=5, layers=2), lambda: torch.randint(0, 11, (4, 7, 9))),
])
def test_stacked_forward_is_every_copy_on_its_own_batch(model, x):
    torch.manual_seed(0)
    stacked = StackedModel(model)
    params, x = stacked.init(4, seed=1), x()
    ours = model.stacked_forward(params, x)
    ref = torch.stack([functional_call(model, {n: p[i] for n, p in params.items()}, (x[i],))
                       for i in range(4)])
    assert torch.allclose(ours, ref, atol=1e-5)


def test_init_is_seeded_and_copies_differ():
    stacked = StackedModel(MLP(4, 3, 2))
    a, b = stacked.init(3, seed=7), stacked.init(3, seed=7)
    assert all(torch.equal(a[n], b[n]) for n in a)
    assert not torch.equal(a["fc1.weight"][0], a["fc1.weight"][1])
    assert stacked.n_parameters == n_parameters(MLP(4, 3, 2)) == 4 * 3 + 3 + 3 * 2 + 2


def _store(n_devices=5, rows=12, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_devices * rows, d)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    devices = np.repeat(np.arange(n_devices), rows)[rng.permutation(n_devices * rows)]
    return DeviceStore.from_arrays(X, y, devices), X, y, devices


def test_local_steps_equal_plain_sgd_on_each_device_alone():
    store, *_ = _store()
    model = MLP(4, 3, 2)
    stacked = StackedModel(model)
    start = stacked.init(3, seed=0)
    segs = torch.tensor([0, 2, 4])
    ours = stacked.local_steps(start, store, segs, steps=4, lr=0.3, batch_size=5,
                               generator=torch.Generator().manual_seed(3))
    gen = torch.Generator().manual_seed(3)
    batches = [store.sample(segs, 5, gen) for _ in range(4)]
    for i in range(3):
        p = {n: v[i].clone().requires_grad_(True) for n, v in start.items()}
        opt = torch.optim.SGD(p.values(), lr=0.3)
        for xb, yb in batches:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(functional_call(model, p, (xb[i],)),
                                              yb[i]).backward()
            opt.step()
        for n in p:
            assert torch.allclose(ours[n][i], p[n].detach(), atol=1e-6)


def test_fused_mlp_step_is_the_autograd_step():
    model = MLP(6, 5, 3)
    stacked = StackedModel(model)
    params = stacked.init(4, seed=2)
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(4, 7, 6, generator=gen), torch.randint(0, 3, (4, 7), generator=gen)
    ref = {n: p.clone().requires_grad_(True) for n, p in params.items()}
    grads = torch.autograd.grad(stacked.losses(ref, x, y).sum(), list(ref.values()))
    ours = {n: p.clone() for n, p in params.items()}
    MLP.stacked_sgd_step(ours, x, y, 0.3)
    for (n, p), g in zip(ref.items(), grads, strict=True):
        assert torch.allclose(ours[n], p.detach() - 0.3 * g, atol=1e-6), n


def test_sgd_steps_in_cache_sized_chunks_equal_all_copies_at_once(monkeypatch):
    import fedclust.fl.stacked as stacked_module
    stacked = StackedModel(MLP(6, 5, 3))
    params = stacked.init(7, seed=4)
    gen = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(3, 7, 5, 6, generator=gen), torch.randint(0, 3, (3, 7, 5), generator=gen)
    whole = stacked.sgd_steps({n: p.clone() for n, p in params.items()}, xs, ys, lr=0.3)
    # three copies' parameters a chunk: chunks of 3, 3 and 1 copies
    monkeypatch.setattr(stacked_module, "_CACHE_BYTES", 3 * stacked.n_parameters * 4)
    chunked = stacked.sgd_steps({n: p.clone() for n, p in params.items()}, xs, ys, lr=0.3)
    for n in whole:
        assert not torch.equal(whole[n], params[n])
        assert torch.equal(chunked[n], whole[n]), n


def test_rows_of_many_steps_are_those_of_one_call_per_step():
    store, *_ = _store()
    segs = torch.tensor([4, 0, 2])
    xs, ys = store.sample(segs, 5, torch.Generator().manual_seed(9), steps=3)
    gen = torch.Generator().manual_seed(9)
    for step in range(3):
        xb, yb = store.sample(segs, 5, gen)
        assert torch.equal(xs[step], xb) and torch.equal(ys[step], yb)


def test_sample_draws_only_rows_of_the_segment():
    store, X, _, devices = _store()
    xb, _ = store.sample(torch.tensor([1, 3]), 50, torch.Generator().manual_seed(0))
    for j, z in enumerate([1, 3]):
        own = {tuple(r) for r in X[devices == z]}
        assert all(tuple(r) in own for r in xb[j].numpy())


def test_average_by_group_weights_and_keeps_untrained_groups():
    previous = {"w": torch.tensor([[1.0], [2.0], [3.0]])}
    trained = {"w": torch.tensor([[10.0], [20.0], [40.0]])}
    out = average_by_group(trained, torch.tensor([0, 0, 2]), torch.tensor([1.0, 3.0, 1.0]),
                           previous)
    assert out["w"].ravel().tolist() == pytest.approx([17.5, 2.0, 40.0])
    assert take(out, torch.tensor([2, 2]))["w"].ravel().tolist() == [40.0, 40.0]
    # into a buffer that held other numbers: the same means, written there
    buffer = {"w": torch.full((3, 1), 7.0)}
    again = average_by_group({"w": torch.tensor([[10.0], [20.0], [40.0]])},
                             torch.tensor([0, 0, 2]), torch.tensor([1.0, 3.0, 1.0]), previous,
                             out=buffer)
    assert again["w"] is buffer["w"] and torch.equal(again["w"], out["w"])


def test_loss_matrix_is_every_model_on_every_segment():
    store, *_ = _store()
    model = MLP(4, 3, 2)
    stacked = StackedModel(model)
    params = stacked.init(2, seed=0)
    segs = torch.tensor([0, 1, 4])
    L = stacked.loss_matrix(params, store, segs, rows=8, generator=torch.Generator().manual_seed(1))
    xb, yb = store.sample(segs, 8, torch.Generator().manual_seed(1))
    for m in range(2):
        for j in range(3):
            ref = torch.nn.functional.cross_entropy(
                functional_call(model, {n: p[m] for n, p in params.items()}, (xb[j],)), yb[j])
            assert L[m, j] == pytest.approx(float(ref), abs=1e-5)


def test_store_keeps_segments_contiguous_and_names_them():
    store, X, _, devices = _store()
    assert store.sizes.tolist() == [12] * 5
    seg = store.segment_of_row()
    np.testing.assert_array_equal(store.segment_ids[seg], devices[store.order])
    np.testing.assert_array_equal(store.X.numpy(), X[store.order])
    with pytest.raises(ValueError, match="same length"):
        DeviceStore.from_arrays(X, X[:, 0], devices[:-1])


def test_split_per_device_holds_out_a_share_of_each_device():
    devices = np.repeat(np.arange(4), [10, 20, 1, 5])
    test = split_per_device(devices, 0.2, 0)
    assert np.bincount(devices[test], minlength=4).tolist() == [2, 4, 0, 1]
    by_order = split_per_device(devices, 0.2, order=np.arange(len(devices)))
    assert by_order[8:10].all() and not by_order[:8].any()    # the last rows of device 0
    with pytest.raises(ValueError, match="test_fraction"):
        split_per_device(devices, 1.5)


def test_powerlaw_partition_gives_two_neighbouring_classes_and_a_heavy_tail():
    y = np.repeat(np.arange(10), 3000)
    devices = powerlaw_class_partition(y, 500, random_state=0)
    again = powerlaw_class_partition(y, 500, random_state=0)
    np.testing.assert_array_equal(devices, again)
    dealt = devices >= 0
    for u in (0, 7, 499):
        classes = set(y[devices == u])
        assert classes <= {u % 10, (u + 1) % 10}
        assert all(np.sum((devices == u) & (y == c)) >= 5 for c in (u % 10, (u + 1) % 10))
    sizes = np.bincount(devices[dealt], minlength=500)
    assert sizes.min() >= 10 and sizes.max() / np.median(sizes) > 10
    assert (~dealt).sum() < 1000                # the floors drop under one row per slot
    with pytest.raises(ValueError, match="class 0"):
        powerlaw_class_partition(np.repeat(np.arange(10), 10), 500)


def test_rotate_images_is_numpys_rot90():
    X = np.arange(2 * 9).reshape(2, 9)
    np.testing.assert_array_equal(rotate_images(X, 1, side=3).reshape(2, 3, 3),
                                  np.rot90(X.reshape(2, 3, 3), 1, axes=(1, 2)))
    np.testing.assert_array_equal(rotate_images(X, 4, side=3), X)


def test_build_model_names_the_choices():
    assert isinstance(build_model("mlp", d_in=4, hidden=2, n_classes=2), MLP)
    with pytest.raises(ValueError, match="mlp"):
        build_model("cnn")
    with pytest.raises(TypeError, match="stacked_forward"):
        StackedModel(torch.nn.Linear(2, 2))


def test_fedavg_rounds_are_reproducible_and_counted_exactly():
    store, *_ = _store(n_devices=8)
    trainer = FederatedTrainer(MLP(4, 3, 2), lr=0.5, local_steps=3, batch_size=4,
                               progress=False)
    size = trainer.stacked.n_parameters
    a = trainer.run(store, rounds=6, selection=RandomBySize(3), seed=1, eval_every=2,
                    evaluate=lambda m: {"w": float(m["fc2.bias"].sum())})
    b = trainer.run(store, rounds=6, selection=RandomBySize(3), seed=1, eval_every=2,
                    evaluate=lambda m: {"w": float(m["fc2.bias"].sum())})
    assert [r["w"] for r in a.history] == [r["w"] for r in b.history]
    assert [r["round"] for r in a.history] == [0, 2, 4, 6]
    comm = a.communication
    assert comm["rounds"] == 6
    assert comm["floats_down"] == comm["floats_up"] == 6 * 3 * size
    assert comm["bytes_up"] == 4 * comm["floats_up"]
    # booked in bulk, the ledger holds one message per device and round, edge by edge
    kinds = comm.by_kind().set_index("kind")
    assert kinds.loc["model", "messages"] == kinds.loc["model_update", "messages"] == 6 * 3
    edges = comm.by_edge()
    assert (edges["floats"] == edges["messages"] * size).all()


def test_one_device_full_participation_is_sgd_on_that_device():
    store, *_ = _store(n_devices=1)
    model = MLP(4, 3, 2)
    trainer = FederatedTrainer(model, lr=0.2, local_steps=2, batch_size=6, progress=False)
    result = trainer.run(store, rounds=3, selection=RandomBySize(1), seed=4)
    stacked = StackedModel(model)
    params = stacked.init(1, seed_for(4, "init"))
    gen = torch.Generator().manual_seed(seed_for(4, "batches"))
    for _ in range(3):
        params = stacked.local_steps(params, store, torch.tensor([0]), steps=2, lr=0.2,
                                     batch_size=6, generator=gen)
    for n in params:
        assert torch.allclose(result.models[n], params[n], atol=1e-6)


def _two_tasks():
    """Devices 0-3 label x0 > 0 as 1, devices 4-7 the opposite; two hand-made models solve
    one task each."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8 * 20, 2)).astype(np.float32)
    devices = np.repeat(np.arange(8), 20)
    y = ((X[:, 0] > 0) ^ (devices >= 4)).astype(np.int64)
    model = MLP(2, 2, 2)
    w1 = torch.tensor([[5.0, 0.0], [-5.0, 0.0]])
    models = {"fc1.weight": torch.stack([w1, w1]), "fc1.bias": torch.zeros(2, 2),
              "fc2.weight": torch.stack([torch.eye(2)[[1, 0]], torch.eye(2)]),
              "fc2.bias": torch.zeros(2, 2)}
    return DeviceStore.from_arrays(X, y, devices), model, models


def test_ifca_devices_pick_the_model_of_their_task():
    store, model, models = _two_tasks()
    trainer = FederatedTrainer(model, lr=0.1, local_steps=1, batch_size=5, loss_rows=20,
                               progress=False)
    choice = trainer.choose_models(models, store, np.arange(8), torch.Generator().manual_seed(0))
    assert choice.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]


def test_ifca_rounds_send_k_models_down_and_an_identity_up():
    store, model, _ = _two_tasks()
    trainer = FederatedTrainer(model, lr=0.1, local_steps=1, batch_size=5, progress=False)
    result = trainer.run(store, rounds=4, selection=RandomBySize(5), seed=0, n_models=2,
                         ifca=True, true_group=np.repeat([0, 1], 4))
    size = trainer.stacked.n_parameters
    comm = result.communication
    assert comm["floats_down"] == 4 * 5 * 2 * size
    assert comm["floats_up"] == 4 * 5 * size and comm["ints_up"] == 4 * 5
    assert len(result.identity_accuracy) == 4
    assert all(0.5 <= a <= 1.0 for a in result.identity_accuracy)


def test_ifca_restarts_keep_the_lowest_objective_and_book_every_start():
    store, *_ = _store(n_devices=6)
    trainer = FederatedTrainer(MLP(4, 3, 2), lr=0.3, local_steps=2, batch_size=4,
                               loss_rows=5, progress=False)
    size = trainer.stacked.n_parameters
    result = trainer.run(store, rounds=5, selection=RandomBySize(2), seed=3, n_models=2,
                         ifca=True, restarts=3, restart_rounds=2, eval_every=2,
                         evaluate=lambda m: {"w": float(m["fc2.bias"].sum())})
    assert len(result.restart_scores) == 3
    assert result.restart_kept == int(np.argmin(result.restart_scores))
    # the kept start only: one row per evaluated round, its models at the end
    assert [r["round"] for r in result.history] == [0, 2, 4, 5]
    assert result.history[-1]["w"] == float(result.models["fc2.bias"].sum())
    comm = result.communication
    assert comm["rounds"] == 5 + 1                              # + the scoring round
    warm, rest = 3 * 2 * 2, 3 * 2                               # (starts x) rounds x devices
    assert comm["floats_down"] == (warm + rest) * 2 * size + 6 * 3 * 2 * size
    assert comm["floats_up"] == (warm + rest) * size + 6 * 3
    # identical starts: every start is the run's own when there is one
    single = trainer.run(store, rounds=5, selection=RandomBySize(2), seed=3, n_models=2,
                         ifca=True)
    again = trainer.run(store, rounds=5, selection=RandomBySize(2), seed=3, n_models=2,
                        ifca=True, restarts=1, restart_rounds=3)
    assert all(torch.equal(single.models[n], again.models[n]) for n in single.models)
    assert single.restart_scores == [] and single.restart_kept == 0
    with pytest.raises(ValueError, match="restarts are IFCA's"):
        trainer.run(store, rounds=5, selection=RandomBySize(2), seed=3, restarts=2)
    with pytest.raises(ValueError, match="restart_rounds"):
        trainer.run(store, rounds=5, selection=RandomBySize(2), seed=3, n_models=2,
                    ifca=True, restarts=2, restart_rounds=6)


def test_snapshots_held_until_the_restart_decision_are_the_models_of_their_round():
    # the pool writes every round into the stack of the round before last: the evaluations
    # of the kept start, held until restart_rounds, must see its models of their own round,
    # those a run of that start alone gives (start 0 is the run's own)
    store, *_ = _store(n_devices=6)
    trainer = FederatedTrainer(MLP(4, 3, 2), lr=0.3, local_steps=2, batch_size=4,
                               loss_rows=5, progress=False)

    def run(seed, restarts):
        return trainer.run(store, rounds=6, selection=RandomBySize(2), seed=seed, n_models=2,
                           ifca=True, restarts=restarts, restart_rounds=5, eval_every=1,
                           evaluate=lambda m: {"w": float(m["fc1.weight"].sum())})

    seed = next(s for s in range(50) if run(s, 3).restart_kept == 0)
    restarted, alone = run(seed, 3), run(seed, 1)
    assert [r["round"] for r in restarted.history] == list(range(7))
    assert [r["w"] for r in restarted.history[:6]] == [r["w"] for r in alone.history[:6]]
    assert len({r["w"] for r in alone.history}) == 7


def test_groups_train_their_own_models():
    """Two groups with fixed segments: a group no device trains keeps its initial model."""
    store, model, _ = _two_tasks()
    trainer = FederatedTrainer(model, lr=0.1, local_steps=1, batch_size=5, progress=False)
    group = np.repeat([0, 1], 4)
    result = trainer.run(store, rounds=2, selection=RandomBySize(8), seed=0, n_models=3,
                         segment_group=group)
    initial = trainer.stacked.init(3, seed_for(0, "init"))
    assert torch.equal(result.models["fc1.weight"][2], initial["fc1.weight"][2])
    assert not torch.equal(result.models["fc1.weight"][0], initial["fc1.weight"][0])
    with pytest.raises(ValueError, match="segment_group"):
        trainer.run(store, rounds=1, selection=RandomBySize(2), seed=0, n_models=1,
                    segment_group=group)


def test_trainer_validates_its_parameters():
    with pytest.raises(ValueError, match="lr"):
        FederatedTrainer(MLP(2, 2, 2), lr=0, local_steps=1, batch_size=1)
    with pytest.raises(ValueError, match="aggregation"):
        FederatedTrainer(MLP(2, 2, 2), lr=0.1, local_steps=1, batch_size=1, aggregation="x")
    with pytest.raises(TypeError, match="local_steps"):
        FederatedTrainer(MLP(2, 2, 2), lr=0.1, local_steps=1.5, batch_size=1)


def _jobs_store(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(240, 6)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return DeviceStore.from_arrays(X, y, np.arange(240) % 12)


def test_run_many_gives_every_job_the_result_it_gets_alone():
    # jobs of different lengths, one IFCA job with restarts (its starts train beside the
    # others until it keeps one), one with a ledger of its own and devices of one to three
    # segments: each result is its own run's bit for bit on a CPU
    trainer = FederatedTrainer(MLP(6, 5, 2), lr=0.3, local_steps=2, batch_size=4,
                               progress=False)
    jobs = [dict(train=_jobs_store(0), rounds=7, selection=RandomBySize(3), seed=1),
            dict(train=_jobs_store(1), rounds=4, selection=RandomBySize(4), seed=2,
                 n_models=2, ifca=True, restarts=3, restart_rounds=2, eval_every=2),
            dict(train=_jobs_store(2), rounds=5, selection=RandomBySize(2), seed=3,
                 n_models=2, segment_group=np.arange(12) % 2,
                 segment_device=np.array([0, 0, 1, 2, 2, 2, 3, 4, 5, 5, 6, 7]))]
    with warnings.catch_warnings():
        # the trained copies change in number from round to round: torch warns when a
        # non-empty output buffer is resized
        warnings.simplefilter("error", UserWarning)
        together = trainer.run_many(jobs)
    for job, result in zip(jobs, together, strict=True):
        alone = trainer.run(**job)
        assert result.history == alone.history
        assert result.restart_scores == alone.restart_scores
        assert result.identity_accuracy == alone.identity_accuracy
        for name, p in alone.models.items():
            assert torch.equal(result.models[name], p)
        assert result.communication["floats_up"] == alone.communication["floats_up"]
        assert result.communication["rounds"] == alone.communication["rounds"]
    assert [r.communication["rounds"] for r in together] == [7, 4 + 1, 5]


def test_run_many_refuses_an_empty_list_and_a_bad_device():
    trainer = FederatedTrainer(MLP(2, 2, 2), lr=0.1, local_steps=1, batch_size=1,
                               progress=False)
    with pytest.raises(ValueError, match="at least one job"):
        trainer.run_many([])
    with pytest.raises(ValueError, match="device must be"):
        FederatedTrainer(MLP(2, 2, 2), lr=0.1, local_steps=1, batch_size=1, device="gpu")


def test_the_rounds_run_under_deterministic_algorithms_and_restore_the_mode():
    # on a GPU, index_add_ (the server's average) sums in a fixed order only in this mode
    seen = []
    trainer = FederatedTrainer(MLP(6, 5, 2), lr=0.3, local_steps=1, batch_size=4,
                               progress=False)
    before = torch.get_deterministic_debug_mode()
    trainer.run(_jobs_store(0), rounds=2, selection=RandomBySize(2), seed=0,
                evaluate=lambda models: seen.append(
                    torch.are_deterministic_algorithms_enabled()) or {})
    assert seen == [True, True, True]
    assert torch.get_deterministic_debug_mode() == before

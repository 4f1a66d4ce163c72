"""Federated training: one local step of D devices, stacked against a per-device loop, and
the rounds of Table 2's paper profile.

For the models of k-FED's applications (``fedclust.fl.models``: Table 2's 784-200-10 MLP and
Fig 4's character LSTM), times one local SGD step of ``D`` devices on ``B`` rows each

* stacked: ``StackedModel.local_steps`` (one batched forward and backward pass for all D; the
  MLP takes its hand-written fused step, ``MLP.stacked_sgd_step``),
* autograd: the same stacked step through autograd (what the MLP took before its fused step),
* loop: the baseline, one ``torch.func.functional_call`` forward/backward per device,

and one whole round of ``FederatedTrainer`` as Table 2's paper profile runs it (4 devices, 10
steps of 10 rows: Global, and IFCA with its 4 models' loss queries on 50 rows), on one torch
thread (as the pipeline's jobs run). Times are CPU seconds of this process (robust to other
processes sharing the cores), best of ``--repeat``.

    python benchmarks/fl_round.py [--devices 1 4 10 30 100] [--repeat 5]

Writes ``benchmarks/results/fl_round.{csv,md}``.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch.func import functional_call

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import best_of, machine  # noqa: E402

from fedclust.fl.data import DeviceStore  # noqa: E402
from fedclust.fl.models import MLP, CharLSTM  # noqa: E402
from fedclust.fl.selection import RandomBySize  # noqa: E402
from fedclust.fl.stacked import StackedModel  # noqa: E402
from fedclust.fl.training import FederatedTrainer  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"


def _store(model_name, n_devices, rows=200):
    rng = np.random.default_rng(0)
    devices = np.repeat(np.arange(n_devices), rows)
    if model_name == "mlp":
        X = rng.random((len(devices), 784), dtype=np.float32)
        y = rng.integers(0, 10, len(devices))
    else:
        X = rng.integers(0, 80, (len(devices), 80))
        y = rng.integers(0, 80, len(devices))
    return DeviceStore.from_arrays(X, y, devices)


def _loop_step(model, stacked_params, store, segments, batch_size, generator, lr):
    xb, yb = store.sample(segments, batch_size, generator)
    out = {}
    for i in range(len(segments)):
        params = {n: p[i].clone().requires_grad_(True) for n, p in stacked_params.items()}
        loss = F.cross_entropy(functional_call(model, params, (xb[i],)), yb[i])
        grads = torch.autograd.grad(loss, list(params.values()))
        out[i] = [p.detach() - lr * g for p, g in zip(params.values(), grads, strict=True)]
    return out


def _cpu_best(fn, repeat):
    """Best CPU time of ``repeat`` calls after one warm-up call."""
    return best_of(fn, repeat, clock=time.process_time)[0]


def _without_fused(model):
    """The same model taking its steps through autograd."""
    model = copy.deepcopy(model)
    model.stacked_sgd_step = None
    return model


def _round_rows(repeat):
    """CPU time of one round of Table 2's paper profile (Global and IFCA), 100 devices (of
    500 rows: what a round costs does not depend on the rows a device holds)."""
    store = _store("mlp", 100, rows=500)
    rows = []
    for method, ifca in (("global", False), ("ifca", True)):
        trainer = FederatedTrainer(MLP(), lr=0.01, local_steps=10, batch_size=10, loss_rows=50,
                                   progress=False)
        run = partial(trainer.run, store, rounds=50, selection=RandomBySize(4), seed=0,
                      n_models=4 if ifca else 1, ifca=ifca)
        rows.append({"model": f"mlp round ({method})", "devices": 4, "batch_size": 10,
                     "stacked_ms": 1e3 * _cpu_best(run, max(1, repeat // 2)) / 50})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 4, 10, 30, 100])
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--lstm-hidden", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    models = {"mlp": MLP(), "lstm": CharLSTM(hidden=args.lstm_hidden)}
    for name, model in models.items():
        stacked, plain = StackedModel(model), StackedModel(_without_fused(model))
        for D in args.devices:
            if name == "lstm" and D > 100:
                continue
            store = _store(name, D)
            params = stacked.init(D, seed=0)
            segments = torch.arange(D)
            gen = torch.Generator().manual_seed(0)
            step = dict(steps=1, lr=0.01, batch_size=args.batch_size, generator=gen)
            t_stacked = _cpu_best(partial(stacked.local_steps, params, store, segments, **step),
                                  args.repeat)
            t_autograd = (_cpu_best(partial(plain.local_steps, params, store, segments, **step),
                                    args.repeat) if name == "mlp" else t_stacked)
            t_loop = _cpu_best(partial(_loop_step, model, params, store, segments,
                                       args.batch_size, gen, 0.01), args.repeat)
            rows.append({"model": name, "devices": D, "batch_size": args.batch_size,
                         "stacked_ms": 1e3 * t_stacked, "autograd_ms": 1e3 * t_autograd,
                         "loop_ms": 1e3 * t_loop, "stacked_ms_per_device": 1e3 * t_stacked / D,
                         "autograd_over_stacked": t_autograd / t_stacked,
                         "loop_over_stacked": t_loop / t_stacked})
            print(rows[-1], flush=True)
    rows += _round_rows(args.repeat)
    print(rows[-2:], flush=True)
    table = pd.DataFrame(rows).assign(machine=machine(), torch=torch.__version__)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "fl_round.csv", index=False)
    lines = [f"# One local step of D devices: fused, autograd and a per-device loop\n\n"
             f"Machine: {machine()}, torch {torch.__version__}, one thread, CPU time of this "
             f"process. {args.batch_size} rows per device; MLP 784-200-10 (Table 2), LSTM embed "
             f"8, hidden {args.lstm_hidden} over 80 characters (Fig 4). Best of {args.repeat} "
             f"after one warm-up call. The last rows: one whole round of Table 2's paper "
             f"profile (4 devices, 10 steps of 10 rows; IFCA with its loss queries). Command: "
             f"`python benchmarks/fl_round.py`.\n",
             "| model | D | stacked (ms) | per device (ms) | autograd (ms) | autograd / stacked "
             "| loop (ms) | loop / stacked |",
             "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        if r.model.startswith("mlp round"):
            lines.append(f"| {r.model} | {r.devices} | {r.stacked_ms:.1f} | | | | | |")
            continue
        lines.append(f"| {r.model} | {r.devices} | {r.stacked_ms:.1f} | "
                     f"{r.stacked_ms_per_device:.2f} | {r.autograd_ms:.1f} | "
                     f"{r.autograd_over_stacked:.2f} | {r.loop_ms:.1f} | "
                     f"{r.loop_over_stacked:.2f} |")
    (OUT / "fl_round.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

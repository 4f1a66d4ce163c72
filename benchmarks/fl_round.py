"""Federated training: one local step of D devices, stacked against a per-device loop.

For the models of k-FED's applications (``fedclust.fl.models``: Table 2's 784-200-10 MLP and
Fig 4's character LSTM), times one local SGD step of ``D`` devices on ``B`` rows each

* stacked: ``StackedModel.local_steps`` (one batched forward and backward pass for all D), and
* loop: the baseline, one ``torch.func.functional_call`` forward/backward per device,

and records the time per device and the loop/stacked ratio, on one torch thread (as the
pipeline's jobs run).

    python benchmarks/fl_round.py [--devices 1 10 30 100 300] [--repeat 5]

Writes ``benchmarks/results/fl_round.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch.func import functional_call

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import best_time, machine  # noqa: E402

from fedclust.fl.data import DeviceStore  # noqa: E402
from fedclust.fl.models import MLP, CharLSTM  # noqa: E402
from fedclust.fl.stacked import StackedModel  # noqa: E402

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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 10, 30, 100, 300])
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--lstm-hidden", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    models = {"mlp": MLP(), "lstm": CharLSTM(hidden=args.lstm_hidden)}
    for name, model in models.items():
        stacked = StackedModel(model)
        for D in args.devices:
            if name == "lstm" and D > 100:
                continue
            store = _store(name, D)
            params = stacked.init(D, seed=0)
            segments = torch.arange(D)
            gen = torch.Generator().manual_seed(0)
            t_stacked = best_time(partial(stacked.local_steps, params, store, segments, steps=1,
                                      lr=0.01, batch_size=args.batch_size, generator=gen),
                              args.repeat)
            t_loop = best_time(partial(_loop_step, model, params, store, segments,
                                   args.batch_size, gen, 0.01), args.repeat)
            rows.append({"model": name, "devices": D, "batch_size": args.batch_size,
                         "stacked_ms": 1e3 * t_stacked, "loop_ms": 1e3 * t_loop,
                         "stacked_ms_per_device": 1e3 * t_stacked / D,
                         "loop_over_stacked": t_loop / t_stacked})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows).assign(machine=machine(), torch=torch.__version__)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "fl_round.csv", index=False)
    lines = [f"# One local step of D devices: stacked against a per-device loop\n\n"
             f"Machine: {machine()}, torch {torch.__version__}, one thread. {args.batch_size} "
             f"rows per device; MLP 784-200-10 (Table 2), LSTM embed 8, hidden "
             f"{args.lstm_hidden} over 80 characters (Fig 4). Best of {args.repeat} after one "
             f"warm-up call. Command: "
             f"`python benchmarks/fl_round.py`.\n",
             "| model | D | stacked (ms) | per device (ms) | loop (ms) | loop / stacked |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.model} | {r.devices} | {r.stacked_ms:.1f} | {r.stacked_ms_per_device:.2f} "
              f"| {r.loop_ms:.1f} | {r.loop_over_stacked:.2f} |" for r in table.itertuples()]
    (OUT / "fl_round.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""How far Table 2's rounds on a CPU are from what one core's arithmetic allows.

k-FED's Table 2 is the paper profile's second-longest rule (config/config.yaml: 15,000 rounds
of 4 devices x 10 local SGD steps on batches of 10 rows, a 784-200-10 MLP, 2 runs of 12 cells).
On one thread, measured in one sitting:

* a **round** of the Global method at paper scale (real MNIST, one run), in seconds: the slope
  between a short and a long run of the training alone (:func:`fedclust.papers.kfed.
  applications.table2_cells`, timed as ``benchmarks/gpu.py`` times it), so that the run's
  one-off work (initial models, evaluations) is apart;
* the round's **SGD steps alone** (:meth:`fedclust.fl.models.MLP.stacked_sgd_step` on 4 copies,
  10 steps of 10 rows), in seconds;
* their **floating-point work**, counted from the shapes (the forward and backward products
  and the fused updates: about 6.7 MFLOP a step), against **one thread's float32 GEMM rate**
  (a 1024 x 1024 product, and a batched product of the step's own shapes).

The ratio of the GEMM rate to the round's rate bounds what any kernel work on the CPU can give
Table 2 at these settings.

    python benchmarks/table2_floor.py --mnist ../shared/data/mnist

Writes ``benchmarks/results/table2_floor.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_kernel import best_time, machine  # noqa: E402
from gpu import RoundTimer  # noqa: E402

from fedclust.data.mnist import load_mnist  # noqa: E402
from fedclust.fl.models import MLP  # noqa: E402
from fedclust.papers.kfed import applications, declare  # noqa: E402


def step_flops(d_in: int, hidden: int, classes: int, batch: int) -> float:
    """Floating-point operations of one fused SGD step of one copy (a multiply-add is two)."""
    products = (2 * batch * d_in * hidden + 2 * batch * hidden * classes      # forward
                + 2 * batch * classes * hidden                                # back to hidden
                + 2 * batch * hidden * classes + 2 * batch * d_in * hidden)   # weight gradients
    updates = 2 * (d_in * hidden + hidden + hidden * classes + classes)
    return float(products + updates)


def gemm_rate(shape_a, shape_b, repeat: int, calls: int) -> float:
    """Best GFLOP/s of ``calls`` float32 batched products of these shapes."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.rand(shape_a, generator=gen), torch.rand(shape_b, generator=gen)

    def work():
        for _ in range(calls):
            torch.matmul(a, b)

    flops = 2.0 * a.shape[-2] * a.shape[-1] * b.shape[-1] * (a.shape[0] if a.dim() == 3 else 1)
    return calls * flops / best_time(work, repeat) / 1e9


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mnist", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    settings = declare.table2_settings(config)
    hidden = settings["model_options"]["hidden"]
    devices, steps, batch = (settings[k] for k in ("devices_per_round", "local_steps",
                                                   "batch_size"))
    rows = []

    # the round's SGD steps alone, on the copies of one round
    model = MLP(784, hidden, 10)
    gen = torch.Generator().manual_seed(0)
    params = {n: p.detach()[None].repeat(devices, *(1,) * p.dim()).clone()
              for n, p in model.named_parameters()}
    xs = torch.rand(steps, devices, batch, 784, generator=gen)
    ys = torch.randint(0, 10, (steps, devices, batch), generator=gen)

    def round_steps():
        for s in range(steps):
            MLP.stacked_sgd_step(params, xs[s], ys[s], settings["lr"])

    flops = devices * steps * step_flops(784, hidden, 10, batch)
    steps_s = best_time(lambda: [round_steps() for _ in range(20)], args.repeat) / 20
    rows.append({"what": "SGD steps of one round (4 copies x 10 steps, fused)",
                 "seconds": steps_s, "gflops": flops / steps_s / 1e9})

    # a round of Global at paper scale: the slope between two lengths
    train, test = load_mnist(args.mnist, "train"), load_mnist(args.mnist, "test")
    cells = [(100, 1, "global")]
    timer, seconds = RoundTimer(), {}
    for rounds in (20, 20, 520):       # the first call warms up
        cfg = {**settings, "rounds": rounds, "eval_every": rounds, "runs": 1,
               "eval_train_rows": 1, "eval_test_rows": 1, "device": "cpu"}
        applications.table2_cells(train, test, cells=cells, cfg=cfg, base_seed=2021)
        seconds[rounds] = timer.seconds[-1]
    per_round = (seconds[520] - seconds[20]) / 500
    rows.append({"what": "a round of Global, paper scale, one run (slope 20 -> 520 rounds)",
                 "seconds": per_round, "gflops": flops / per_round / 1e9})

    for what, a, b, calls in (
            ("float32 GEMM 1024 x 1024 x 1024", (1024, 1024), (1024, 1024), 5),
            ("float32 batched product of the step's shapes (4 x 10x784 @ 784x200)",
             (devices, batch, 784), (devices, 784, hidden), 2000)):
        rows.append({"what": what, "seconds": float("nan"),
                     "gflops": gemm_rate(a, b, args.repeat, calls)})
    table = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "table2_floor.csv", index=False)
    peak = table.loc[table["what"].str.startswith("float32 GEMM"), "gflops"].iloc[0]
    runs = len(declare.table2_cells(config)) * settings["runs"]
    lines = ["# Table 2's rounds on one CPU thread against its arithmetic", "",
             f"Machine: {machine()}; one torch thread. The paper profile's settings "
             f"(config/config.yaml: {devices} devices a round, {steps} local steps of "
             f"{batch} rows, a 784-{hidden}-10 MLP): {flops / 1e6:.0f} MFLOP of SGD a round. "
             "Command: `python benchmarks/table2_floor.py --mnist ../shared/data/mnist`.", "",
             "| what | seconds | GFLOP/s | share of the 1024^3 GEMM's rate |",
             "|---|---|---|---|"]
    for _, r in table.iterrows():
        sec = "" if r.seconds != r.seconds else f"{r.seconds * 1e3:.2f} ms"
        lines.append(f"| {r.what} | {sec} | {r.gflops:.1f} | {r.gflops / peak:.0%} |")
    lines += ["", f"At the measured round, Global's {settings['rounds']:,} rounds take "
              f"{per_round * settings['rounds'] / 60:.1f} min of one core a run; at the GEMM "
              f"rate, {flops * settings['rounds'] / peak / 1e9 / 60:.1f} min. Table 2 trains "
              f"{runs} runs (IFCA's and k-FED's cost more a round "
              "than Global's: the models' losses on every device, IFCA's 48 starts).", ""]
    (args.out / "table2_floor.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()

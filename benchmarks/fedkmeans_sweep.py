"""Federated k-means sweeps (Triebe & Rajagopal, Figs 1-5), timed for several source trees.

Each sweep of ``config/config.yaml`` (the paper's 50 clients of 10 one-dimensional points,
200 rounds, its seeds) runs in a child process per ``--src`` tree (e.g. a worktree of an
earlier commit against this one), one thread, alternating between the trees ``--repeat``
times; CPU seconds of the child, and the sha256 of the sweep's table, which must be the same
for every tree (a speed change that changes the numbers shows here).

    git worktree add /tmp/before <commit>
    python benchmarks/fedkmeans_sweep.py --src /tmp/before/src src --labels before after

Writes ``benchmarks/results/fedkmeans_sweep.{csv,md}``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine, run_in_tree  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results"

# in a child process per tree, so that each imports its own fedclust
CHILD = r"""
import hashlib, json, sys, time, yaml
from fedclust.papers.fedkmeans.experiments import sweep_runs
config = yaml.safe_load(open(sys.argv[1]))
settings = config["fedkmeans"]
spec = settings["sweeps"][sys.argv[2]]
start = time.process_time()
table = sweep_runs(sys.argv[2], spec, settings, base_seed=config["seed"], show_progress=False)
print(json.dumps({"cpu_s": time.process_time() - start,
                  "sha256": hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()}))
"""


def time_sweep(src: Path, sweep: str) -> dict:
    return run_in_tree(src, CHILD, REPO / "config" / "config.yaml", sweep)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, nargs="+", required=True)
    parser.add_argument("--labels", nargs="+", required=True)
    parser.add_argument("--sweeps", nargs="+", default=["fig1", "fig4b", "fig5b"])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    if len(args.labels) != len(args.src):
        parser.error("give one label per --src tree")
    rows = []
    for r in range(args.repeat):
        for sweep in args.sweeps:
            for label, src in zip(args.labels, args.src, strict=True):
                row = {"label": label, "src": str(src), "sweep": sweep, "repeat": r,
                       **time_sweep(src, sweep)}
                print(row, flush=True)
                rows.append(row)
    table = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "fedkmeans_sweep.csv", index=False)
    best = table.groupby(["sweep", "label"], sort=False)["cpu_s"].min().unstack("label")
    same = table.groupby("sweep", sort=False)["sha256"].nunique() == 1
    base = args.labels[0]
    lines = ["# Federated k-means sweeps at paper scale, before and after", "",
             f"Machine: {machine()}, one thread, CPU seconds of a child process, best of "
             f"{args.repeat} alternating runs; the paper profile's config/config.yaml (every "
             f"seed, 200 rounds). Command: `python benchmarks/fedkmeans_sweep.py --src "
             f"{' '.join(map(str, args.src))} --labels "
             f"{' '.join(map(shlex.quote, args.labels))}` (compare within this table: the "
             f"trees ran alternately in one sitting). Same table: the sweep's rows have the "
             f"same sha256 under every tree.", "",
             "| sweep | " + " | ".join(f"{label} (s)" for label in args.labels)
             + f" | speed-up over {base} | same table |",
             "|---|" + "---|" * len(args.labels) + "---|---|"]
    for sweep, r in best.iterrows():
        ratio = " / ".join(f"{r[base] / r[label]:.2f}x" for label in args.labels[1:])
        lines.append(f"| {sweep} | " + " | ".join(f"{r[label]:.1f}" for label in args.labels)
                     + f" | {ratio} | {'yes' if same[sweep] else 'NO'} |")
    (OUT / "fedkmeans_sweep.md").write_text("\n".join(lines) + "\n")
    print((OUT / "fedkmeans_sweep.md").read_text())


if __name__ == "__main__":
    main()

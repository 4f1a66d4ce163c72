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
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import (  # noqa: E402
    add_tree_arguments,
    alternating_runs,
    machine,
    run_in_tree,
    speedup_rows,
    tree_options,
    trees,
    write_results,
)

REPO = Path(__file__).resolve().parents[1]

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


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_tree_arguments(parser)
    parser.add_argument("--sweeps", nargs="+", default=["fig1", "fig4b", "fig5b"])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    return args, trees(parser, args)


def render(table: pd.DataFrame, args, machine_line: str) -> str:
    """The markdown report of ``table`` (one row per repeat, sweep and tree)."""
    best = table.groupby(["sweep", "label"], sort=False)["cpu_s"].min().unstack("label")
    same = table.groupby("sweep", sort=False)["sha256"].nunique() == 1
    lines = ["# Federated k-means sweeps at paper scale, before and after", "",
             f"Machine: {machine_line}, one thread, CPU seconds of a child process, best of "
             f"{args.repeat} alternating runs; the paper profile's config/config.yaml (every "
             f"seed, 200 rounds). Command: `python benchmarks/fedkmeans_sweep.py "
             f"{tree_options(args)}` (compare within this table: the "
             f"trees ran alternately in one sitting). Same table: the sweep's rows have the "
             f"same sha256 under every tree.", "",
             *speedup_rows(best[args.labels], same, "sweep")]
    return "\n".join(lines) + "\n"


def main(argv=None):
    args, pairs = parse(argv)
    table = alternating_runs(pairs, args.repeat, time_sweep, item="sweep", items=args.sweeps)
    write_results("fedkmeans_sweep", table, render(table, args, machine()))


if __name__ == "__main__":
    main()

"""One run of one paper-profile partition of the coreset figures, timed for several source trees.

The unit of the coreset grid at paper scale (config/config.yaml: the mixture of
YearPredictionMSD's shape, 515,345 x 90, k = 50, 100 sites, five coreset sizes for the
distributed coreset and COMBINE, five for Zhang et al., 5 restarts per solve; one run of the
uniform partition on the paper's three graphs, which a tree that shares the graph-free draws
computes in one call and an older tree in one call per graph) and of its
baseline (5 restarts of k-means++ and Lloyd on the whole mixture), timed in one sitting for
each ``--src`` tree given (e.g. a worktree of an earlier commit against this one), alternating
between the trees ``--repeat`` times; CPU seconds of the child process, one thread.

    git worktree add /tmp/before <commit>
    python benchmarks/coreset_setting_run.py --src /tmp/before/src src --labels before after

Writes ``benchmarks/results/coreset_setting_run.{csv,md}``.
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
    tree_options,
    trees,
    write_results,
)

REPO = Path(__file__).resolve().parents[1]

# run in a child process per tree, so that each imports its own fedclust
CHILD = r"""
import inspect, json, sys, time, yaml
import numpy as np, pandas as pd
from fedclust.papers.coreset import experiments as ce
from fedclust.papers.coreset.declare import job_settings
config = yaml.safe_load(open(sys.argv[1]))
settings = job_settings(config, "msd_mixture")
X, _, _ = ce.load_data("msd_mixture", None, settings, base_seed=config["seed"])
baseline = pd.DataFrame({"run": [0], "metric": ["baseline_cost"], "value": [1.0]})
out = {"dtype": str(X.dtype)}
graphs = ["erdos_renyi", "grid", "preferential_attachment"]
common = dict(dataset="msd_mixture", objective="kmeans", n_sites=100, partition="uniform",
              runs=1, base_seed=config["seed"], baseline=baseline, show_progress=False)
start = time.process_time()
if "graphs" in inspect.signature(ce.setting_runs).parameters:  # one call for the graphs
    ce.setting_runs(X, 50, settings, graphs=graphs, **common)
else:  # a tree with one job per graph
    for graph in graphs:
        ce.setting_runs(X, 50, settings, graph=graph, **common)
out["setting_run_s"] = time.process_time() - start
start = time.process_time()
ce.baseline_runs(X, 50, settings, dataset="msd_mixture", objective="kmeans",
                 base_seed=config["seed"], runs=1, show_progress=False)
out["baseline_run_s"] = time.process_time() - start
print(json.dumps(out))
"""


def time_tree(src: Path) -> dict:
    return run_in_tree(src, CHILD, REPO / "config" / "config.yaml")


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_tree_arguments(parser)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    return args, trees(parser, args)


def render(table: pd.DataFrame, args, machine_line: str) -> str:
    """The markdown report of ``table`` (one row per repeat and tree)."""
    best = table.groupby("label", sort=False)[["setting_run_s", "baseline_run_s"]].min()
    lines = ["# One run of one coreset partition (three graphs) at paper scale, before and after",
             "",
             f"Machine: {machine_line}, one thread, CPU seconds of a child process, best of "
             f"{args.repeat} alternating runs. Setting: the uniform partition on Erdős–Rényi, grid "
             f"and preferential attachment, 100 sites, the paper profile's config/config.yaml "
             f"(one run); baseline: one run of 5 "
             f"restarts on the whole mixture. Command: `python "
             f"benchmarks/coreset_setting_run.py {tree_options(args)}` (compare within this "
             f"table: the trees ran alternately in one sitting).", "",
             "| tree | data dtype | one run on three graphs (s) | one baseline run (s) |",
             "|---|---|---|---|"]
    dtypes = table.groupby("label", sort=False)["dtype"].first()
    for label, r in best.iterrows():
        lines.append(f"| {label} | {dtypes[label]} | {r.setting_run_s:.1f} | "
                     f"{r.baseline_run_s:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    args, pairs = parse(argv)
    table = alternating_runs(pairs, args.repeat, time_tree)
    write_results("coreset_setting_run", table, render(table, args, machine()))


if __name__ == "__main__":
    main()

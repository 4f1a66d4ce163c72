"""k-FED Table 2: one run of a cell at paper scale, timed for several source trees.

Each ``--cells`` entry (``Z/k'/method``, e.g. ``100/1/ifca``) trains run ``--run`` of that
cell of ``config/config.yaml`` (15,000 rounds, IFCA's 48 restarts; ``--rounds`` shortens it)
in a child process per ``--src`` tree (e.g. a worktree of an earlier commit against this
one), one thread each, ``--processes`` children side by side; CPU and wall seconds of the
child, and the sha256 of the cell's tidy table, which must be the same for every tree (a
speed change that changes the numbers shows here).

    git worktree add /tmp/before <commit>
    python benchmarks/table2_cell.py --src /tmp/before/src src --labels before after

Writes ``benchmarks/results/table2_cell.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import (  # noqa: E402
    add_tree_arguments,
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
from pathlib import Path
from fedclust.data.mnist import load_mnist
from fedclust.papers.kfed.applications import table2_runs
config = yaml.safe_load(open(sys.argv[1]))
cfg = dict(config["kfed"]["table2"], runs=int(sys.argv[4]) + 1, device="cpu")
if int(sys.argv[5]):
    cfg.update(rounds=int(sys.argv[5]), eval_every=min(cfg["eval_every"], int(sys.argv[5])))
n_devices, device_clusters, method = sys.argv[3].split("/")
root = Path(sys.argv[2])
train, test = load_mnist(root, "train"), load_mnist(root, "test")
wall, cpu = time.perf_counter(), time.process_time()
table = table2_runs(train, test, n_devices=int(n_devices), device_clusters=int(device_clusters),
                    method=method, cfg=dict(cfg, progress=False), base_seed=config["seed"])
table = table[table["run"] == int(sys.argv[4])]
print(json.dumps({"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
                  "sha256": hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()}))
"""


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_tree_arguments(parser)
    parser.add_argument("--cells", nargs="+", default=["100/1/ifca", "100/1/global"])
    parser.add_argument("--run", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=0, help="0: the config's")
    parser.add_argument("--mnist", type=Path, default=REPO / "data" / "mnist" / "raw",
                        help="MNIST's four idx files (the pipeline's data/mnist/raw)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--out", default="table2_cell")
    args = parser.parse_args(argv)
    return args, trees(parser, args)


def render(table: pd.DataFrame, args, machine_line: str) -> str:
    """The markdown report of ``table`` (one row per cell and tree)."""
    cpu = table.pivot(index="cell", columns="label", values="cpu_s").loc[args.cells, args.labels]
    same = table.groupby("cell")["sha256"].nunique() == 1
    command = " ".join(["python benchmarks/table2_cell.py", tree_options(args),
                        "--cells", *args.cells]
                       + (["--rounds", str(args.rounds)] if args.rounds else [])
                       + (["--processes", str(args.processes)] if args.processes > 1 else []))
    lines = ["# k-FED Table 2: one run of a cell, before and after", "",
             f"Machine: {machine_line}; one thread a child, {args.processes} side by side; CPU "
             f"seconds of the child (its wall seconds in the CSV). Run {args.run} of each cell "
             f"of config/config.yaml"
             + (f", {args.rounds} rounds" if args.rounds else " (paper scale)")
             + f". Command: `{command}` (compare within this table: one sitting). Same table: "
             f"the cell's tidy rows have the same sha256 under every tree.", "",
             *speedup_rows(cpu, same, "cell (Z/k'/method)")]
    return "\n".join(lines) + "\n"


def main(argv=None):
    args, pairs = parse(argv)
    tasks = [(cell, label, src) for cell in args.cells for label, src in pairs]

    def timed(task):
        cell, label, src = task
        row = {"cell": cell, "label": label, "src": str(src), "run": args.run,
               "rounds": args.rounds or None,
               **run_in_tree(src, CHILD, REPO / "config" / "config.yaml", args.mnist, cell,
                             args.run, args.rounds)}
        print(row, flush=True)
        return row

    with ThreadPoolExecutor(args.processes) as pool:
        table = pd.DataFrame(list(pool.map(timed, tasks)))
    write_results(args.out, table, render(table, args, machine()))


if __name__ == "__main__":
    main()

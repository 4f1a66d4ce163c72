"""Greedy k-means++ on every site at once (the coreset's local solutions), timed for several
source trees.

The paper profile's stand-in for YearPredictionMSD (515,345 x 90 float32, config/config.yaml)
split into its 100 sites, each seeded with k = 50 centers (``kmeans_plusplus_by_device``,
Algorithm 1, step 1's seeding), in a child process per ``--src`` tree, one thread,
alternating between the trees ``--repeat`` times: CPU seconds of the child's calls and the
sha256 of the chosen rows, which must be the same for every tree. Two splits: equal sites
(the uniform partition's sizes) and Dirichlet(1) sizes (uneven sites, as the similarity and
weighted partitions make them).

    git worktree add /tmp/before <commit>
    python benchmarks/seeding_dtype.py --src /tmp/before/src src --labels before after

Writes ``benchmarks/results/<--name>.{csv,md}`` (default ``seeding_dtype``: float32 rows
streamed as they are; ``seeding_float32_dots``: their dot products summed in float32).
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
import numpy as np
from fedclust.federation import Federation
from fedclust.papers.coreset import experiments as ce
from fedclust.papers.coreset.declare import job_settings
from fedclust.seeding import kmeans_plusplus_by_device
config = yaml.safe_load(open(sys.argv[1]))
X, _, _ = ce.load_data("msd_mixture", None, job_settings(config, "msd_mixture"),
                       base_seed=config["seed"])
rng = np.random.default_rng(0)
sites = config["coreset"]["n_sites"]
if sys.argv[2] == "equal":
    devices = rng.permutation(len(X)) % sites
else:
    share = rng.dirichlet(np.ones(sites))
    devices = rng.choice(sites, size=len(X), p=share)
fed = Federation.from_devices(X, devices)
# at most a site's rows (a Dirichlet share can leave a site fewer than k)
k = np.minimum(config["coreset"]["synthetic"]["n_clusters"], np.bincount(fed.device_of_row))
kmeans_plusplus_by_device(fed, k, random_state=0)  # compiled or loaded before the clock
start = time.process_time()
rows = [kmeans_plusplus_by_device(fed, k, random_state=seed) for seed in range(3)]
print(json.dumps({"dtype": str(X.dtype), "cpu_s": time.process_time() - start,
                  "sha256": hashlib.sha256(np.stack(rows).tobytes()).hexdigest()}))
"""


def time_split(src: Path, split: str) -> dict:
    return run_in_tree(src, CHILD, REPO / "config" / "config.yaml", split)


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_tree_arguments(parser)
    parser.add_argument("--splits", nargs="+", default=["equal", "dirichlet"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--name", default="seeding_dtype",
                        help="the results' file name under benchmarks/results/ (one per change "
                             "measured)")
    args = parser.parse_args(argv)
    return args, trees(parser, args)


def render(table: pd.DataFrame, args, machine_line: str) -> str:
    """The markdown report of ``table`` (one row per repeat, split and tree)."""
    best = table.groupby(["split", "label"], sort=False)["cpu_s"].min().unstack("label")
    same = table.groupby("split", sort=False)["sha256"].nunique() == 1
    lines = ["# Greedy k-means++ on 100 sites at paper scale, before and after", "",
             f"Machine: {machine_line}, one thread, CPU seconds of a child process for three "
             f"seedings (seeds 0-2) of every site, best of {args.repeat} alternating runs; "
             f"the paper profile's msd_mixture ({table['dtype'].iloc[0]}), 100 sites, k = 50. "
             f"Command: `python benchmarks/seeding_dtype.py {tree_options(args)}"
             f"{'' if args.name == 'seeding_dtype' else ' --name ' + args.name}` (compare "
             f"within this table: the trees ran alternately in one sitting). Same rows: the "
             f"chosen rows have the same sha256 under every tree.", "",
             *speedup_rows(best[args.labels], same, "split")]
    return "\n".join(lines) + "\n"


def main(argv=None):
    args, pairs = parse(argv)
    table = alternating_runs(pairs, args.repeat, time_split, item="split", items=args.splits)
    write_results(args.name, table, render(table, args, machine()))


if __name__ == "__main__":
    main()

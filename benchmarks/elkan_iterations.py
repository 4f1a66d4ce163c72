"""Where one restart of a coreset baseline spends its time, iteration by iteration.

The paper profile's coreset baselines run Lloyd with Elkan's bounds on the whole stand-in
mixture (515,345 x 90, k = 50; config/config.yaml) for up to ``coreset.max_iter``
iterations. This times, for one restart from scikit-learn's k-means++ (``--seed``), each
iteration's assignment (``_elkan_kernel``) and means pass (``_segment_sums64``), with how
many labels the assignment changed, on one thread:

    python benchmarks/elkan_iterations.py [--iterations 100]

Writes ``benchmarks/results/elkan_iterations.{csv,md}``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pandas as pd  # noqa: E402
import yaml  # noqa: E402
from sklearn.cluster import kmeans_plusplus  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from bench_kernel import machine  # noqa: E402

import fedclust.lloyd as kernel  # noqa: E402
from fedclust.papers.coreset import experiments  # noqa: E402
from fedclust.papers.coreset.declare import job_settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results"


def timed_iterations(X, centers, max_iter: int) -> pd.DataFrame:
    """One Elkan Lloyd run from ``centers``; a row per iteration: seconds of the assignment
    and of the means pass, labels changed."""
    rows = []
    assign, means = kernel._elkan_kernel, kernel._segment_sums64

    def timed_assign(X, moved, half_gap, reach, shift, drift, labels, upper, lower):
        before = labels.copy()
        start = time.perf_counter()
        assign(X, moved, half_gap, reach, shift, drift, labels, upper, lower)
        rows[-1].update(assign_s=time.perf_counter() - start,
                        labels_changed=int((labels != before).sum()))

    def timed_means(*args):
        start = time.perf_counter()
        out = means(*args)
        rows.append({"iteration": len(rows) + 1, "means_s": time.perf_counter() - start})
        return out

    kernel._elkan_kernel, kernel._segment_sums64 = timed_assign, timed_means
    try:
        kernel._elkan_iterations(X, centers[:2].copy(), weights=None, max_iter=1,
                                 on_iteration=None)  # compiled before timing
        rows.clear()
        kernel._elkan_iterations(X, centers, weights=None, max_iter=max_iter, on_iteration=None)
    finally:
        kernel._elkan_kernel, kernel._segment_sums64 = assign, means
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=None,
                        help="default: the config's coreset.max_iter")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    settings = job_settings(config, "msd_mixture")
    X, _, _ = experiments.load_data("msd_mixture", None, settings, base_seed=config["seed"])
    k = settings["synthetic"]["n_clusters"]
    centers, _ = kmeans_plusplus(X, k, random_state=args.seed)
    iterations = args.iterations or settings["max_iter"]
    table = timed_iterations(X, centers.astype(X.dtype), iterations)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "elkan_iterations.csv", index=False)
    shown = table[table.iteration.isin([1, 2, 3, 5, 10, 20, 40, 60, 80, 100, len(table)])]
    lines = ["# One coreset baseline restart, iteration by iteration", "",
             f"Machine: {machine()}. The paper profile's stand-in mixture ({X.shape[0]:,} x "
             f"{X.shape[1]}, {X.dtype}, k = {k}), one restart from scikit-learn's k-means++ "
             f"(seed {args.seed}), Elkan's bounds, one thread, {len(table)} iterations: the "
             f"assignment {table.assign_s.sum():.1f} s and the means pass "
             f"{table.means_s.sum():.1f} s in all. Command: `python "
             f"benchmarks/elkan_iterations.py`.", "",
             "| iteration | assignment (s) | means pass (s) | labels changed |",
             "|---|---|---|---|"]
    lines += [f"| {r.iteration} | {r.assign_s:.3f} | {r.means_s:.3f} | {r.labels_changed:,} |"
              for r in shown.drop_duplicates("iteration").itertuples()]
    (OUT / "elkan_iterations.md").write_text("\n".join(lines) + "\n")
    print((OUT / "elkan_iterations.md").read_text())


if __name__ == "__main__":
    main()

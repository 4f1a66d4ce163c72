"""Distributed coreset (Balcan et al. 2013) against scikit-learn's KMeans on the full data.

On the mixture of YearPredictionMSD's shape
(``fedclust.papers.coreset.experiments.make_msd_mixture``; the paper's 515,345 x 90 and k = 50
by default) split uniformly over 100 sites, times

* the coreset construction (local solutions on every site, shares, sampling) and the weighted
  solve on the coreset (``DistributedCoreset`` with a star, ``n_init`` restarts), and
* scikit-learn's ``KMeans(k, n_init, max_iter)`` on the pooled data (the baseline),

and records the k-means cost of both solutions on the full data (their ratio: the price of
never pooling the data) and the time ratio, for several coreset sizes.

    python benchmarks/coreset.py [--n-samples 515345] [--sizes 2000 10000 50000] [--seeds 3]

Every size is fitted with ``--seeds`` seeds: at k = 50 the weighted Lloyd's local optima move
the cost ratio by several percent from seed to seed, more than the coreset size does.

Writes ``benchmarks/results/coreset.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

from fedclust import DistributedCoreset  # noqa: E402
from fedclust.metrics import kmeans_cost  # noqa: E402
from fedclust.papers.coreset.experiments import make_msd_mixture  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=515_345)
    parser.add_argument("--n-features", type=int, default=90)
    parser.add_argument("--n-clusters", type=int, default=50)
    parser.add_argument("--sites", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 50000])
    parser.add_argument("--n-init", type=int, default=5)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    X, _ = make_msd_mixture(args.n_samples, args.n_features, args.n_clusters, random_state=0)
    devices = np.random.default_rng(1).integers(0, args.sites, len(X))
    start = time.perf_counter()
    km = KMeans(args.n_clusters, n_init=args.n_init, max_iter=args.max_iter,
                random_state=0).fit(X)
    sk_time = time.perf_counter() - start
    sk_cost = kmeans_cost(X, km.cluster_centers_)
    print(f"scikit-learn KMeans: {sk_time:.1f} s, cost {sk_cost:.6g}", flush=True)
    rows = []
    for size in args.sizes:
        for seed in range(args.seeds):
            start = time.perf_counter()
            model = DistributedCoreset(args.n_clusters, size, n_init=args.n_init,
                                       max_iter=args.max_iter, random_state=seed)
            model.fit(X, devices=devices)
            elapsed = time.perf_counter() - start
            cost = kmeans_cost(X, model.cluster_centers_)
            rows.append({"n": len(X), "d": X.shape[1], "k": args.n_clusters,
                         "sites": args.sites, "coreset_size": size, "seed": seed,
                         "coreset_points": model.coreset_.size, "coreset_time_s": elapsed,
                         "sklearn_time_s": sk_time, "speedup": sk_time / elapsed,
                         "cost_ratio": cost / sk_cost})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows).assign(machine=machine())
    summary = table.groupby("coreset_size").agg(
        points=("coreset_points", "mean"), time=("coreset_time_s", "mean"),
        speedup=("speedup", "mean"), ratio=("cost_ratio", "mean"),
        low=("cost_ratio", "min"), high=("cost_ratio", "max"))
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "coreset.csv", index=False)
    lines = [f"# Distributed coreset against scikit-learn KMeans on the full data\n\n"
             f"Machine: {machine()}. Mixture of YearPredictionMSD's shape ({len(X):,} x "
             f"{X.shape[1]}, k = {args.n_clusters}), {args.sites} sites (uniform), both with "
             f"n_init = {args.n_init}, max_iter = {args.max_iter}; scikit-learn once "
             f"(seed 0), the coreset with {args.seeds} seeds (mean, and the cost ratio's "
             f"range). Command: `python benchmarks/coreset.py`.\n",
             "| t | coreset points | coreset fit (s) | scikit-learn (s) | speed-up | "
             "cost / scikit-learn's (range) |", "|---|---|---|---|---|---|"]
    lines += [f"| {size} | {r.points:.0f} | {r.time:.1f} | {sk_time:.1f} | {r.speedup:.1f} "
              f"| {r.ratio:.3f} ({r.low:.3f}-{r.high:.3f}) |"
              for size, r in summary.iterrows()]
    (OUT / "coreset.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""k-FED's Lloyd start in Algorithm 1: projected vs original means of S_r, when k' is smaller
than the clusters a device holds (the regime where the two differ).

    python benchmarks/kfed_local_means.py [--mirror ../shared/data] [--seeds 8]

FEMNIST (100 writers of the LEAF sample, pixels) dealt IID over 100 clients, oracle k = 4
(best of 5 k-means++ starts), k' = 2 and 4: k-FED's nearest-center cost over the oracle's, mean
± std over seeds, for ``local_means="projected"`` (the authors' code) and ``"original"`` (the
text's mu(S_r)). Writes benchmarks/results/kfed_local_means.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from fedclust import KFed  # noqa: E402
from fedclust.centralized import reference_kmeans  # noqa: E402
from fedclust.data.femnist import leaf_femnist_dirs, load_leaf_femnist  # noqa: E402
from fedclust.metrics import kmeans_cost  # noqa: E402
from fedclust.partitions import iid_partition  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--seeds", type=int, default=8)
    args = parser.parse_args(argv)
    data = load_leaf_femnist(leaf_femnist_dirs(args.mirror))
    keep = np.random.default_rng(0).choice(data.n_writers, size=100, replace=False)
    X = data.X[np.isin(data.writers, keep)].astype(np.float64)
    devices = iid_partition(len(X), 100, random_state=1)
    optimum = reference_kmeans(X, 4, seed=0, n_init=5).inertia
    lines = ["# k-FED local means: projected vs original (k = 4, 100 IID clients)\n",
             f"FEMNIST, {len(X)} images of 100 writers; {args.seeds} seeds; "
             f"{platform.python_version()}, numpy {np.__version__}.\n",
             "| k' | local_means | cost / optimum (mean ± std) |", "|---|---|---|"]
    for k_prime in (2, 4):
        for means in ("projected", "original"):
            ratios = [kmeans_cost(X, KFed(4, k_prime, local_means=means, random_state=s)
                                  .fit(X, devices=devices).cluster_centers_) / optimum
                      for s in range(args.seeds)]
            lines.append(f"| {k_prime} | {means} | {np.mean(ratios):.4f} ± "
                         f"{np.std(ratios):.4f} |")
            print(lines[-1], flush=True)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "kfed_local_means.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

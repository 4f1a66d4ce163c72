"""FederatedKMeans' wall and CPU time against scikit-learn's KMeans on the same Lloyd work.

``make_blobs(200_000, n_features=50, centers=50)`` dealt over 100 devices (rows ``i mod 100``),
k = 50. Both start from the same 50 rows and run exactly 20 Lloyd updates:
``FederatedKMeans(50, init=C, n_rounds=20, tol=None, server_momentum=None,
reassign_after=None)`` (every client, one full-batch local epoch a round: the round is one
Lloyd update on the pooled rows, the case issue 43 measured) and ``KMeans(50, init=C,
n_init=1, max_iter=20, tol=0, algorithm="lloyd")``. Each is timed ``--repeat`` times after
a warm-up fit (compiled kernels); the best wall time is kept with its CPU time (process time
of all threads), so ``cpu / wall`` is the threads in use. The ratio is FederatedKMeans' best
wall time over KMeans' in the same run.

    python benchmarks/fedkmeans_speed.py [--repeat 3]

Writes ``benchmarks/results/fedkmeans_speed.{csv,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

from fedclust import FederatedKMeans  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
N, D, K, DEVICES, ROUNDS = 200_000, 50, 50, 100, 20


def _timed(fit, repeat: int) -> tuple[float, float]:
    """The best wall time of ``repeat`` fits after a warm-up, with that fit's CPU time."""
    fit()
    best = (np.inf, np.inf)
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fit()
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    X, _ = make_blobs(N, n_features=D, centers=K, random_state=0)
    devices = np.arange(N) % DEVICES
    init = X[np.random.default_rng(0).choice(N, K, replace=False)]
    warnings.simplefilter("ignore")
    fits = {
        "KMeans(init=C, n_init=1, max_iter=20, tol=0)": lambda: KMeans(
            K, init=init, n_init=1, max_iter=ROUNDS, tol=0, algorithm="lloyd").fit(X),
        "FederatedKMeans(init=C, n_rounds=20, tol=None)": lambda: FederatedKMeans(
            K, init=init, n_rounds=ROUNDS, tol=None, server_momentum=None,
            reassign_after=None, random_state=0).fit(X, devices=devices),
    }
    rows = []
    for name, fit in fits.items():
        wall, cpu = _timed(fit, args.repeat)
        rows.append({"estimator": name, "wall_s": wall, "cpu_s": cpu, "threads": cpu / wall})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    table["ratio"] = table.wall_s / table.wall_s.iloc[0]
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "fedkmeans_speed.csv", index=False)
    lines = ["# FederatedKMeans against KMeans: the same 20 Lloyd updates", "",
             f"Machine: {machine()}; {datetime.date.today()}. Command: "
             f"`python benchmarks/fedkmeans_speed.py --repeat {args.repeat}`. "
             f"{N:,} x {D} blobs, k = {K}, {DEVICES} devices, both from the same {K} rows; "
             "best wall time of the repeats after a warm-up fit, its CPU time over all "
             "threads; ratio: wall time over KMeans' in the same run.", "",
             "| estimator | wall (s) | CPU (s) | CPU / wall | ratio |", "|---|---|---|---|---|"]
    lines += [f"| `{r.estimator}` | {r.wall_s:.2f} | {r.cpu_s:.2f} | {r.threads:.2f} | "
              f"{r.ratio:.2f} |" for r in table.itertuples()]
    (OUT / "fedkmeans_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

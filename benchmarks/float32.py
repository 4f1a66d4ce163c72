"""float32 against float64: what single precision costs in accuracy, and what it saves in time.

Every estimator keeps float32 input in float32 (the kernel's GEMMs run in single precision,
sums and norms accumulate in float64). This fits KFed and LocalKMeans on the prepared real data
sets twice, on the float32 features as stored and on the same features cast to float64, from
the same seed, and records per fit: accuracy against the class labels, k-means cost (both
evaluated in float64), the share of rows whose cluster differs (after matching clusters), and
the time ratio.

    python benchmarks/float32.py --data <results of a run>/data    # prepared features.h5 files

Writes ``benchmarks/results/float32.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

from fedclust import KFed, LocalKMeans, iid_partition  # noqa: E402
from fedclust.data.prepared import read_prepared  # noqa: E402
from fedclust.metrics import clustering_accuracy, kmeans_cost  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
DATASETS = ("mnist", "femnist", "shakespeare", "postures", "mnist_cnn")


def _devices(data, n_devices, seed):
    """The data set's natural devices where it has them, else an iid split."""
    if (data.devices >= 0).all():
        return data.devices
    return iid_partition(len(data.X), n_devices, random_state=seed)


def _estimators(k):
    return {"KFed (k'=sqrt k)": KFed(k, max(1, round(np.sqrt(k))), random_state=0),
            "LocalKMeans (L=5, T=20)": LocalKMeans(k, local_steps=5, n_iter=20, random_state=0)}


def _timed_fit(estimator, X, devices, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        estimator.fit(X, devices=devices)
        times.append(time.perf_counter() - start)
    return estimator, min(times)


def compare(data, repeat: int):
    y = np.unique(data.y, return_inverse=True)[1]
    k = int(y.max()) + 1
    devices = _devices(data, 100, seed=0)
    X32 = np.ascontiguousarray(data.X, dtype=np.float32)
    X64 = X32.astype(np.float64)
    for name, estimator in _estimators(k).items():
        single, t32 = _timed_fit(estimator, X32, devices, repeat)
        labels32, centers32 = single.labels_.copy(), single.cluster_centers_.astype(np.float64)
        double, t64 = _timed_fit(estimator, X64, devices, repeat)
        yield {"dataset": data.name, "n": len(X64), "d": X64.shape[1], "k": k,
               "estimator": name,
               "accuracy_float64": clustering_accuracy(y, double.labels_),
               "accuracy_float32": clustering_accuracy(y, labels32),
               "cost_float32_over_float64": kmeans_cost(X64, centers32, labels32)
               / kmeans_cost(X64, double.cluster_centers_, double.labels_),
               "rows_in_other_cluster": 1.0 - clustering_accuracy(double.labels_, labels32),
               "time_float64_s": t64, "time_float32_s": t32, "speedup": t64 / t32}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="a run's data/ directory (holding <name>/features.h5)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    rows = []
    with threadpool_limits(1, user_api="blas"):
        for name in DATASETS:
            path = args.data / name / "features.h5"
            if not path.exists():
                print(f"skipped {name}: no {path}", flush=True)
                continue
            for row in compare(read_prepared(path), args.repeat):
                print(row, flush=True)
                rows.append(row)
    table = pd.DataFrame(rows).assign(machine=machine())
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "float32.csv", index=False)
    lines = [f"# float32 against float64\n\nMachine: {machine()}. Same seed, same devices "
             f"(natural ones, else 100 iid), best of {args.repeat} fits, one BLAS thread. "
             f"Command: `python benchmarks/float32.py --data <run>/data`.\n",
             "| data set | n x d, k | estimator | accuracy f64 | accuracy f32 | cost f32 / f64 | "
             "rows in another cluster | time f64 (s) | time f32 (s) | speed-up |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r.dataset} | {r.n} x {r.d}, {r.k} | {r.estimator} | "
              f"{r.accuracy_float64:.4f} | {r.accuracy_float32:.4f} | "
              f"{r.cost_float32_over_float64:.6f} | {r.rows_in_other_cluster:.4f} | "
              f"{r.time_float64_s:.2f} | {r.time_float32_s:.2f} | {r.speedup:.2f} |"
              for r in table.itertuples()]
    (OUT / "float32.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

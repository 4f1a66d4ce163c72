"""Cost against the number of devices: KFed, LocalKMeans, DistributedCoreset and FederatedKMeans
from 10^2 to 10^5 devices.

    python benchmarks/scaling.py [--devices 100 1000 10000 100000]

Every device holds ``--per-device`` points (the data grows with the devices); each point is
fitted in a fresh process, which reports the fit's wall time and its peak memory (the
process's peak resident set during the fit, less the resident set before it). Writes
``benchmarks/results/scaling.{csv,md}`` (with the least-squares slope of log time and log memory
against log devices: 1 is linear) and ``benchmarks/results/scaling.png``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
OUT = ROOT / "benchmarks" / "results"

K, K_PRIME, D = 16, 4, 20
LKM_STEPS, LKM_ITER = 3, 10
CORESET_SIZE = 2000
FKM_FRACTION, FKM_ROUNDS = 0.1, 20
ALGORITHMS = ("KFed", "LocalKMeans", "DistributedCoreset", "FederatedKMeans")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(algorithm: str, n_devices: int, per_device: int) -> dict:
    """Fit one algorithm at one size in this process; return its time and peak memory."""
    from fedclust import (
        DistributedCoreset,
        FederatedKMeans,
        KFed,
        LocalKMeans,
        structured_partition,
    )
    from fedclust.data import make_separated_mixture
    from fedclust.metrics import clustering_accuracy

    groups = K // K_PRIME
    mix = make_separated_mixture(K, D, 100.0, samples_per_cluster=n_devices * per_device // K,
                                 device_clusters=K_PRIME, devices_per_cluster=5, random_state=0)
    if algorithm == "KFed":
        devices = structured_partition(mix.labels, K_PRIME, n_devices // groups, random_state=0)
        estimator = KFed(K, K_PRIME, random_state=0)
    else:
        devices = np.random.default_rng(0).integers(0, n_devices, size=len(mix.labels))
        estimator = {
            "LocalKMeans": lambda: LocalKMeans(K, LKM_STEPS, n_iter=LKM_ITER, random_state=0),
            "DistributedCoreset": lambda: DistributedCoreset(K, CORESET_SIZE, n_init=1,
                                                             random_state=0),
            "FederatedKMeans": lambda: FederatedKMeans(K, sample_fraction=FKM_FRACTION,
                                                       n_rounds=FKM_ROUNDS, init="k-means++",
                                                       reassign_basis="round", random_state=0),
        }[algorithm]()
    # compile the kernels on a small copy first: compilation is not what is measured
    small = np.isin(devices, np.unique(devices)[:8])
    type(estimator)(**estimator.get_params()).fit(mix.X[small], devices=devices[small])
    before = _rss_mb()
    start = time.perf_counter()
    estimator.fit(mix.X, devices=devices)
    seconds = time.perf_counter() - start
    return {"algorithm": algorithm, "devices": int(np.unique(devices).size),
            "points": len(mix.X), "seconds": seconds,
            "peak_memory_mb": max(_rss_mb() - before, 0.0),
            "data_mb": mix.X.nbytes / 2**20,
            "accuracy": clustering_accuracy(mix.labels, estimator.labels_)}


def slope(x, y) -> float:
    return float(np.polyfit(np.log10(x), np.log10(y), 1)[0])


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, column, label in ((axes[0], "seconds", "fit wall time (s)"),
                              (axes[1], "peak_memory_mb", "peak memory of the fit (MiB)")):
        for algorithm, sub in table.groupby("algorithm"):
            values = sub[column].clip(lower=1) if column == "peak_memory_mb" else sub[column]
            ax.loglog(sub.devices, values, "o-",
                      label=f"{algorithm} (slope {slope(sub.devices, values):.2f})")
        ax.set_xlabel("devices")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    per = table.points.iloc[0] // table.devices.iloc[0]
    fig.suptitle(f"Cost against devices: {per} points per device, d={D}, k={K}; "
                 f"KFed k'={K_PRIME}; LocalKMeans L={LKM_STEPS}, T={LKM_ITER}; coreset "
                 f"t={CORESET_SIZE}; federated k-means C={FKM_FRACTION}, T={FKM_ROUNDS}",
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, nargs="*", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--per-device", type=int, default=20)
    parser.add_argument("--one", nargs=2, metavar=("ALGORITHM", "DEVICES"))
    parser.add_argument("--algorithms", nargs="*", default=list(ALGORITHMS),
                        choices=ALGORITHMS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.per_device)))
        return
    rows = []
    for algorithm in args.algorithms:
        for n_devices in args.devices:
            result = subprocess.run(
                [sys.executable, __file__, "--one", algorithm, str(n_devices),
                 "--per-device", str(args.per_device)],
                capture_output=True, text=True, check=True)
            row = json.loads(result.stdout.strip().splitlines()[-1])
            print(row, flush=True)
            rows.append(row)
    table = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "scaling.csv", index=False)
    from bench_kernel import machine
    lines = [f"# Cost against the number of devices\n\nMachine: {machine()}. Command: "
             f"`python benchmarks/scaling.py`. {args.per_device} points per device, d={D}, "
             f"k={K}; KFed with k'={K_PRIME} on structured devices; on random devices "
             f"LocalKMeans with L={LKM_STEPS}, T={LKM_ITER}, DistributedCoreset with "
             f"t={CORESET_SIZE} (star), FederatedKMeans with C={FKM_FRACTION}, "
             f"T={FKM_ROUNDS} rounds (k-means++ start; a cluster below 1 % of the round's "
             f"rows for 20 rounds re-initialized: Sec. 2.3's basis, every client's rows, "
             f"re-initializes all {K} clusters at C={FKM_FRACTION}).\n",
             "| algorithm | devices | points | fit (s) | peak memory (MiB) | data (MiB) | "
             "accuracy |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.algorithm} | {r.devices} | {r.points} | {r.seconds:.3f} | "
              f"{r.peak_memory_mb:.0f} | {r.data_mb:.0f} | {r.accuracy:.3f} |"
              for r in table.itertuples()]
    lines += ["", "Least-squares slope on log-log axes (1 = linear in the devices), over all "
              "sizes and over the two largest (fixed costs weigh on the small ones):", ""]
    for algorithm, sub in table.groupby("algorithm"):
        top = sub.nlargest(2, "devices")
        lines.append(f"- {algorithm}: time {slope(sub.devices, sub.seconds):.2f} "
                     f"(largest {slope(top.devices, top.seconds):.2f}), memory "
                     f"{slope(sub.devices, sub.peak_memory_mb.clip(lower=1)):.2f} "
                     f"(largest {slope(top.devices, top.peak_memory_mb.clip(lower=1)):.2f})")
    (OUT / "scaling.md").write_text("\n".join(lines) + "\n")
    plot(table, OUT / "scaling.png")


if __name__ == "__main__":
    main()

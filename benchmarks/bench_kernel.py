"""Speed of the shared Lloyd kernel and of k-FED, against straightforward alternatives.

Run on demand (not part of the tests):

    python benchmarks/bench_kernel.py            # writes benchmarks/results/kernel.csv and .md

Each case is timed as the best of ``--repeat`` runs (wall clock). The table records the machine
so numbers from different machines are not mixed up.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fedclust import KFed, LocalKMeans, structured_partition  # noqa: E402
from fedclust.data import make_separated_mixture  # noqa: E402
from fedclust.federation import Federation  # noqa: E402
from fedclust.lloyd import assign, assign_by_device, lloyd  # noqa: E402
from fedclust.metrics import misclustering_rate  # noqa: E402
from fedclust.rounds import History  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def case_assign(rng, repeat):
    X = rng.standard_normal((70_000, 784)).astype(np.float32)
    C = rng.standard_normal((50, 784)).astype(np.float32)
    yield "assign 70000x784, k=50", "fedclust.lloyd.assign (chunked GEMM)", \
        best_time(lambda: assign(X, C), repeat)
    yield "assign 70000x784, k=50", "scipy cdist + argmin", \
        best_time(lambda: cdist(X, C, "sqeuclidean").argmin(1), repeat)


def case_assign_by_device(rng, repeat):
    sizes = rng.integers(20, 400, size=2000)
    devices = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.standard_normal((sizes.sum(), 784))
    fed = Federation.from_devices(X, devices)
    C = rng.standard_normal((len(sizes), 8, 784))
    label = f"per-device assign, {len(sizes)} devices, n={sizes.sum()}, d=784, k'=8"
    yield label, "fedclust.lloyd.assign_by_device (one GEMM per device view)", \
        best_time(lambda: assign_by_device(fed, C), repeat)
    # the alternative: devices sorted by size into padded blocks (copied once, as a fit would),
    # each block one batched np.matmul
    order = np.argsort(sizes, kind="stable")
    blocks = np.array_split(order, 20)
    x_sq = np.einsum("ij,ij->i", X, X)
    c_sq = np.einsum("zkd,zkd->zk", C, C)
    padded = []
    for devs in blocks:
        width = sizes[devs].max()
        mask = np.arange(width)[None, :] < sizes[devs][:, None]
        rows = np.where(mask, fed.offsets[devs][:, None] + np.arange(width)[None, :], 0)
        padded.append((devs, X[rows], x_sq[rows], rows[mask], mask))

    def batched():
        out = np.empty(len(X), dtype=np.int64)
        for devs, Xb, _, dest, mask in padded:
            Ct = np.ascontiguousarray(C[devs].transpose(0, 2, 1))
            d2 = c_sq[devs][:, None, :] - 2.0 * np.matmul(Xb, Ct)
            out[dest] = d2.argmin(axis=-1)[mask]
        return out
    yield label, "padded device blocks, one batched np.matmul each (copy made once)", \
        best_time(batched, repeat)


def case_lloyd(rng, repeat):
    X = np.vstack([rng.normal(m, 1.0, size=(5000, 50)) for m in range(20)])
    init = X[rng.choice(len(X), 20, replace=False)]
    label = "Lloyd to convergence, n=100000, d=50, k=20"
    yield label, "fedclust.lloyd.lloyd", best_time(lambda: lloyd(X, init), repeat)
    yield label, "sklearn KMeans(algorithm='lloyd', n_init=1, tol=0)", best_time(
        lambda: KMeans(20, init=init, n_init=1, tol=0.0, algorithm="lloyd").fit(X), repeat)


def case_kfed(rng, repeat):
    for d, k in [(100, 16), (300, 100)]:
        kp = int(round(np.sqrt(k)))
        mix = make_separated_mixture(k, d, 100.0, samples_per_cluster=200, device_clusters=kp,
                                     devices_per_cluster=5, random_state=0)
        devices = structured_partition(mix.labels, kp, 5, random_state=0)
        def fit(k=k, kp=kp, mix=mix, devices=devices):
            KFed(k, kp, random_state=0).fit(mix.X, devices)
        yield f"k-FED fit, Table 1 setting d={d}, k={k}", "KFed.fit", best_time(fit, repeat)


def case_local_kmeans(rng, repeat):
    # the LocalKMeans paper's real-data setting: 100 machines x 500 rows, 512-d, K = 10, T = 20
    n_machines, per_machine, d, k, T, L = 100, 500, 512, 10, 20, 3
    centers = rng.standard_normal((k, d)) * 2.0
    y = rng.integers(0, k, size=n_machines * per_machine)
    X = centers[y] + rng.standard_normal((len(y), d))
    devices = np.repeat(np.arange(n_machines), per_machine)
    init = X[rng.choice(len(X), k, replace=False)]
    label = f"LocalKMeans, M={n_machines} x {per_machine}, d={d}, K={k}, T={T}, L={L}"
    def tracked():
        # per-iteration misclustering scored outside the fit, as the experiments do
        history = History({"misclustering": lambda s: misclustering_rate(y, s.labels)})
        LocalKMeans(k, L, n_iter=T, init=init).fit(X, devices, callback=history)

    yield label, "LocalKMeans.fit (with per-iteration misclustering and objectives)", \
        best_time(tracked, repeat)

    def loop_over_machines():
        # the textbook form: a Python loop over machines, cdist + bincount on each, no tracking
        local = np.repeat(init[None], n_machines, axis=0)
        for t in range(1, T + 1):
            sizes = np.zeros((n_machines, k))
            for m in range(n_machines):
                Xm = X[m * per_machine:(m + 1) * per_machine]
                lab = cdist(Xm, local[m], "sqeuclidean").argmin(1)
                sizes[m] = np.bincount(lab, minlength=k)
                sums = np.zeros((k, d))
                np.add.at(sums, lab, Xm)
                filled = sizes[m] > 0
                local[m, filled] = sums[filled] / sizes[m, filled, None]
            if t % L == 0:
                w = sizes / np.maximum(sizes.sum(0), 1)
                local[:] = np.einsum("mk,mkd->kd", w, local)[None]
    yield label, "Python loop over machines (cdist, np.add.at), no tracking", \
        best_time(loop_over_machines, repeat)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    for case in (case_assign, case_assign_by_device, case_lloyd, case_kfed,
                 case_local_kmeans):
        for benchmark, method, seconds in case(rng, args.repeat):
            print(f"{benchmark:60s} {method:60s} {seconds:8.3f} s", flush=True)
            rows.append({"benchmark": benchmark, "method": method, "seconds": seconds})
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, " \
              f"Python {platform.python_version()}, numpy {np.__version__}"
    table = pd.DataFrame(rows).assign(machine=machine)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "kernel.csv", index=False)
    lines = [f"# Kernel benchmarks\n\nMachine: {machine}. Best of {args.repeat} runs.\n",
             "| benchmark | method | seconds |", "|---|---|---|"]
    lines += [f"| {r.benchmark} | {r.method} | {r.seconds:.3f} |" for r in table.itertuples()]
    (OUT / "kernel.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

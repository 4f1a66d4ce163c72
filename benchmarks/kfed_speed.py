"""``KFed.fit`` against the authors' public k-FED code at scale: time and accuracy.

The authors' code (github.com/metastableB/kfed, ``fkms.algorithms.kfed``; fetched outside the
repository, never committed) and ours on one federation: Table 1's kind of Gaussian mixture
(``fedclust.data.make_separated_mixture``: k = 100 clusters in d = 100, separation c = 100)
over 1,000 devices of 500 points, each holding k' = 10 clusters (``structured_partition``).
Rows: our default (32 server starts, the server's Lloyd to convergence), Algorithm 2 as printed
(``server_starts=1, server_lloyd_rounds=1``), and the authors' code (their devices as a list of
arrays, NumPy's global seed set). One BLAS/OpenMP thread for all; CPU seconds of this process,
best of ``--repeat``; accuracy: the best matching of the found clusters to the mixture's
components (our labels; theirs by the nearest of their returned centers).

    python benchmarks/kfed_speed.py --authors-path DIR [--repeat 3]

Writes ``benchmarks/results/kfed_speed.{csv,md}``.
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
from bench_kernel import best_of, machine  # noqa: E402

from fedclust import KFed, structured_partition  # noqa: E402
from fedclust.data import make_separated_mixture  # noqa: E402
from fedclust.lloyd import assign  # noqa: E402
from fedclust.metrics import clustering_accuracy  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
K, D, K_PRIME, DEVICES, PER_DEVICE = 100, 100, 10, 1000, 500


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors-path", type=Path, required=True,
                        help="a checkout of github.com/metastableB/kfed")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.authors_path))
    from fkms.algorithms import kfed as authors_kfed

    per_group = DEVICES // (K // K_PRIME)
    mix = make_separated_mixture(K, D, 100.0, samples_per_cluster=DEVICES * PER_DEVICE // K,
                                 device_clusters=K_PRIME, devices_per_cluster=5,
                                 random_state=0)
    devices = structured_partition(mix.labels, K_PRIME, per_group, random_state=0)
    rows = [np.flatnonzero(devices == z) for z in np.unique(devices)]

    def authors():
        np.random.seed(0)  # noqa: NPY002 (the authors' code draws from the global state)
        _, centers = authors_kfed([mix.X[r] for r in rows], K_PRIME, K)
        return assign(mix.X, np.asarray(centers))[0]

    methods = {
        "KFed.fit, default (32 server starts, server Lloyd to convergence)":
            lambda: KFed(K, K_PRIME, random_state=0).fit(mix.X, devices=devices).labels_,
        "KFed.fit, Algorithm 2 as printed (1 start, 1 server round)":
            lambda: KFed(K, K_PRIME, server_starts=1, server_lloyd_rounds=1,
                         random_state=0).fit(mix.X, devices=devices).labels_,
        "authors' kfed (metastableB/kfed)": authors,
    }
    table = []
    with threadpool_limits(1):
        for name, fn in methods.items():
            seconds, labels = best_of(fn, args.repeat, clock=time.process_time)
            table.append({"method": name, "cpu_seconds": seconds,
                          "accuracy": clustering_accuracy(mix.labels, labels)})
            print(table[-1], flush=True)
    table = pd.DataFrame(table)
    theirs = table["cpu_seconds"].iloc[-1]
    table["authors_over_this"] = theirs / table["cpu_seconds"]
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "kfed_speed.csv", index=False)
    lines = ["# KFed.fit against the authors' code at 1,000 devices", "",
             f"Machine: {machine()}, one thread, CPU seconds, best of {args.repeat} after a "
             f"warm-up. Data: {DEVICES:,} devices x {PER_DEVICE} points, d = {D}, k = {K}, "
             f"k' = {K_PRIME} (separation c = 100). Command: `python benchmarks/kfed_speed.py "
             f"--authors-path DIR` (DIR: a checkout of github.com/metastableB/kfed).", "",
             "| method | CPU (s) | authors' time / this | accuracy |", "|---|---|---|---|"]
    lines += [f"| {r.method} | {r.cpu_seconds:.2f} | {r.authors_over_this:.1f} | "
              f"{r.accuracy:.3f} |" for r in table.itertuples()]
    (OUT / "kfed_speed.md").write_text("\n".join(lines) + "\n")
    print((OUT / "kfed_speed.md").read_text())


if __name__ == "__main__":
    main()

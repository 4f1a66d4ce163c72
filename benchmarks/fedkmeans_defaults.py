"""FederatedKMeans' defaults against the paper's settings: the cost over pooled k-means.

Two cases, each over ``--seeds`` seeds (the same data, clients and estimator seed for every
variant of a seed):

* ``gaussians_1d`` -- Triebe & Rajagopal's Sec. 2.1: 50 clients of 10 rows, each client's
  rows from one 1-D Gaussian of mean 1..5 and scale 0.2 (client ``i`` gets Gaussian
  ``i mod 5``, as the pipeline), ``K = 5``; new data for every seed.
* ``digits`` -- scikit-learn's digits (1,797 x 64), ``K = 10``, 20 structured clients: the
  ten digits in five random pairs, each pair's rows dealt over four clients
  (``fedclust.partitions.structured_partition(y, 2, 4)``), a new split for every seed.

Variants: the defaults before and after this benchmark's change (``sample_fraction`` 0.1 and
a uniform start in the data's box, then every client and the federated greedy k-means++), the
paper's settings (Fig 1 at ``C = 0.1``: uniform start in ``[0, K + 1]`` as the authors' code
on the 1-D data, in the data's box on digits), and three ablations (one change at a time,
and exact k-means++ in place of the greedy seeding).
Every fit's k-means cost on all the rows is divided by that of scikit-learn's ``KMeans`` on
the pooled rows (k-means++, 10 restarts).

    python benchmarks/fedkmeans_defaults.py [--seeds 20]

Writes ``benchmarks/results/fedkmeans_defaults.{csv,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

from fedclust import FederatedKMeans  # noqa: E402
from fedclust.papers.fedkmeans.experiments import make_client_gaussians  # noqa: E402
from fedclust.partitions import structured_partition  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
#: The defaults before the change, spelled out (the rest of the parameters never changed).
OLD_DEFAULTS = {"sample_fraction": 0.1, "init": "uniform"}
BOUNDS = {"gaussians_1d": (0, 6), "digits": None}  # the paper's [0, K + 1] on its own data


def variants(case: str) -> dict[str, dict]:
    """Name -> FederatedKMeans parameters besides ``n_clusters`` and ``random_state``."""
    return {
        "old defaults (C = 0.1, uniform start in the data's box)": OLD_DEFAULTS,
        "new defaults (C = 1, greedy k-means++)": {},
        "the paper's settings (Fig 1, C = 0.1, uniform start)": {
            "sample_fraction": 0.1, "local_epochs": 1, "batch_size": None, "server_lr": 1.0,
            "server_momentum": 0.5, "server_momentum_style": "ema", "client_lr": 1.0,
            "n_rounds": 200, "init": "uniform", "init_bounds": BOUNDS[case],
            "reassign_fraction": 0.01, "reassign_after": 20, "reassign_basis": "all"},
        "ablation: C = 0.1, greedy k-means++": {"sample_fraction": 0.1},
        "ablation: C = 1, uniform start in the data's box": {"init": "uniform"},
        "ablation: C = 1, exact k-means++": {"init": "k-means++"},
    }


def gaussians_1d(seed: int):
    X, devices, _ = make_client_gaussians(50, 10, [1, 2, 3, 4, 5], 0.2, random_state=seed)
    return X, devices, 5


_DIGITS = load_digits()


def digits(seed: int):
    devices = structured_partition(_DIGITS.target, 2, 4, random_state=seed)
    return _DIGITS.data.astype(np.float64), devices, 10


CASES = {"gaussians_1d": gaussians_1d, "digits": digits}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args(argv)
    rows = []
    for case, make in CASES.items():
        for seed in range(args.seeds):
            X, devices, k = make(seed)
            pooled = KMeans(k, n_init=10, random_state=seed).fit(X).inertia_
            for variant, params in variants(case).items():
                start = time.perf_counter()
                model = FederatedKMeans(k, random_state=seed, **params).fit(X, devices=devices)
                rows.append({"case": case, "variant": variant, "seed": seed, "k": k,
                             "clients": len(np.unique(devices)), "rows": len(X),
                             "cost": model.inertia_, "pooled_cost": pooled,
                             "ratio": model.inertia_ / pooled,
                             "floats": model.communication_.floats,
                             "seconds": time.perf_counter() - start})
            print(case, seed, " ".join(f"{r['ratio']:.3f}" for r in rows[-len(variants(case)):]),
                  flush=True)
    today = datetime.date.today().isoformat()
    table = pd.DataFrame(rows).assign(machine=machine(), date=today)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "fedkmeans_defaults.csv", index=False)
    summary = table.groupby(["case", "variant"], sort=False).agg(
        mean=("ratio", "mean"), median=("ratio", "median"), worst=("ratio", "max"),
        within=("ratio", lambda r: int((r <= 1.1).sum())), floats=("floats", "mean"),
        seconds=("seconds", "mean"))
    lines = [f"# Federated k-means: defaults against the paper's settings\n\n"
             f"Machine: {machine()}; {today}. Cost of the fit on all the rows over that of "
             f"scikit-learn's KMeans on the pooled rows (k-means++, 10 restarts), over "
             f"{args.seeds} seeds (the same data, clients and seed for every variant of a "
             f"seed). gaussians_1d: Sec. 2.1's 50 clients x 10 rows, one 1-D Gaussian each "
             f"(means 1..5, scale 0.2), K = 5, new data per seed. digits: scikit-learn's "
             f"digits (1,797 x 64), K = 10, 20 clients holding two digits each (five random "
             f"pairs over four clients), a new split per seed. Every variant runs T = 200 "
             f"rounds, E = 1, B = infinity, alpha = (1, 0.5) as an EMA momentum, beta = 1 and "
             f"Sec. 2.3's reassignment (0.01 of all rows for 20 rounds). Command: "
             f"`python benchmarks/fedkmeans_defaults.py`.\n",
             "| case | variant | mean | median | worst | seeds within 1.1x | floats sent "
             "| fit (s) |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {case} | {variant} | {r['mean']:.3f} | {r['median']:.3f} | {r['worst']:.3f} "
              f"| {int(r['within'])} of {args.seeds} | {r['floats']:.3g} | {r['seconds']:.2f} |"
              for (case, variant), r in summary.iterrows()]
    (OUT / "fedkmeans_defaults.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""k-FED against the authors' public code (``metastableB/kfed``) on small, unbalanced federations.

    python benchmarks/kfed_authors.py [--authors-path DIR] [--mirror ../shared/data]
                                      [--seeds 20] [--datasets NAME ...]

Every data set is clustered with ``--seeds`` seeds by

* ``ours, before``: ``KFed(server_starts=1, server_lloyd_rounds=1)``, Algorithm 2 as printed and
  the default before issue 24 (one device drawn at random starts the server's farthest-point
  seeding, one Lloyd round; identical to the old default, bit for bit);
* ``ours, 1 start, converge``: one random start, the server's Lloyd run to convergence (the
  authors' server step, with our random start);
* ``ours, after``: today's default (32 starts tried, the server's Lloyd to convergence);
* ``ours, all starts``: every device tried as the start;
* ``ours' local centers, authors' server rule``: the local centers of ``ours, before`` clustered
  as the authors' code does (the first device's centers, farthest points, Lloyd to
  convergence) -- isolates the server step from the local one;
* ``authors``: ``fkms.algorithms.kfed`` imported from ``--authors-path`` (a checkout of
  github.com/metastableB/kfed; the column is left out without it), the devices in the order of
  their ids, NumPy's global seed set to the run's seed (their SVD and k-means++ draw from it);
* ``authors, devices shuffled``: the same with the devices in a random order per seed -- their
  server always starts from the first device, so on one fixed data set the plain column
  always starts from the same device.

Scores: the k-means cost of the returned centers (each point to its nearest center; the
authors' code returns only centers) over the optimum, the best inertia of scikit-learn's
``KMeans(k, n_init=20)`` on the pooled data; beside it the Eq. (1) cost of the induced
clustering (Definition 3.3: each point takes the global cluster of its local center; for the
authors' code, the nearest local center of its device and that center's nearest final center)
over the same optimum. A second table per data set shows where the tail comes from: for the
first seed, the cost reached from every possible start device (one round / to convergence).

Data sets (``k' = 2`` unless stated):

* ``cells-*``: synthetic stand-ins of a small unbalanced federation of cell-type measurements
  (100 devices, ``d = 10``, ``k = 4``): device sizes ``60 + LogNormal(ln 60, 1.2)`` capped at
  1,134 (median ~120); every device holds 2 of the 4 clusters, drawn in proportion to the
  cluster shares, mixed with Dirichlet(0.3) weights (often lopsided); clusters of unequal
  shares and scales, elongated (one axis of variance 3, the others log-uniform in [0.05, 1],
  randomly rotated) -- ``cells-elongated`` (shares .6/.2/.12/.08, scales 2/.5/.5/.3, mean
  distance ~4), ``cells-close`` (shares .45/.3/.17/.08, distance ~3), ``cells-heavy-tailed``
  (Student t with 3 degrees of freedom), ``cells-round`` (spherical, balanced mixing: a
  benign control);
* ``table1``: Table 1's Gaussian mixture (d = 100, k = 16, k' = 4, m0 = 5, c = 100, 200 points
  per cluster; :func:`fedclust.data.make_separated_mixture`) and ``fig1-c0.1``, the same at
  c = 0.1, a point of Fig 1's sweep;
* ``mnist``, ``femnist``, ``shakespeare``: the features the pipeline prepares
  (:mod:`fedclust.data.prepared`, read from the offline mirror; MNIST 10,000 images,
  FEMNIST 100 writers, Shakespeare 109 roles with at most 200 windows each), oracle ``k = 10``
  (the optimum's clustering), 100 devices each holding 2 oracle clusters (the partition of
  Figs 2-3, :func:`fedclust.partitions.subset_partition`); ``femnist-writers`` and
  ``shakespeare-roles``: the natural partitions (the heterogeneity experiment's start).

Writes ``benchmarks/results/kfed_authors.{csv,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.cluster import KMeans

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import machine  # noqa: E402

from fedclust import KFed  # noqa: E402
from fedclust.algorithms.kfed import farthest_point_seeding, server_clustering  # noqa: E402
from fedclust.data import make_separated_mixture  # noqa: E402
from fedclust.lloyd import assign  # noqa: E402
from fedclust.metrics import kmeans_cost, partition_cost  # noqa: E402
from fedclust.partitions import structured_partition, subset_partition  # noqa: E402

CELLS = {
    "cells-elongated": dict(shape="elongated", sep=4.0, shares=(0.6, 0.2, 0.12, 0.08),
                            scales=(2.0, 0.5, 0.5, 0.3), mixing=0.3),
    "cells-close": dict(shape="elongated", sep=3.0, shares=(0.45, 0.3, 0.17, 0.08),
                        scales=(2.0, 0.5, 0.5, 0.3), mixing=0.3),
    "cells-heavy-tailed": dict(shape="t", sep=4.0, shares=(0.5, 0.25, 0.15, 0.1),
                               scales=(1.5, 0.5, 0.7, 0.4), mixing=0.3),
    "cells-round": dict(shape="round", sep=3.0, shares=(0.45, 0.3, 0.17, 0.08),
                        scales=(1.0, 0.7, 1.4, 0.5), mixing=1.0),
}
REAL = {"mnist": ("mnist", "structured"), "femnist": ("femnist", "structured"),
        "femnist-writers": ("femnist", "natural"),
        "shakespeare": ("shakespeare", "structured"),
        "shakespeare-roles": ("shakespeare", "natural")}
DATASETS = (*CELLS, "table1", "fig1-c0.1", *REAL)
BEFORE, CONVERGE, AFTER, ALL = ("ours, before", "ours, 1 start, converge", "ours, after",
                                "ours, all starts")
HYBRID, AUTHORS, SHUFFLED = ("ours' local centers, authors' server rule", "authors",
                             "authors, devices shuffled")


def cells(seed, *, shape, sep, shares, scales, mixing, n_devices=100, d=10):
    """A synthetic federation of the shape described in the module docstring."""
    rng = np.random.default_rng(seed)
    k = len(shares)
    sizes = np.clip(np.round(60 + np.exp(np.log(60) + 1.2 * rng.standard_normal(n_devices))),
                    60, 1134).astype(int)
    shares = np.asarray(shares)
    maps = []
    for j in range(k):
        spectrum = np.ones(d) if shape == "round" else \
            np.r_[3.0, np.exp(rng.uniform(np.log(0.05), 0.0, d - 1))]
        q, r = np.linalg.qr(rng.standard_normal((d, d)))
        maps.append((q * np.sign(np.diag(r))) * (scales[j] * np.sqrt(spectrum)))
    means = rng.standard_normal((k, d)) * sep / np.sqrt(2 * d)
    X, labels, devices = [], [], []
    for z in range(n_devices):
        held = rng.choice(k, size=2, replace=False, p=shares)
        counts = rng.multinomial(sizes[z], rng.dirichlet(np.full(2, mixing)))
        for j, c in zip(held, counts, strict=True):
            noise = rng.standard_t(3, size=(c, d)) / np.sqrt(3) if shape == "t" else \
                rng.standard_normal((c, d))
            X.append(means[j] + noise @ maps[j].T)
            labels.append(np.full(c, j))
            devices.append(np.full(c, z))
    return np.vstack(X), np.concatenate(labels), np.concatenate(devices)


def optimum(X, k):
    """Best inertia of scikit-learn's KMeans(k, n_init=20) and its labels."""
    km = KMeans(k, n_init=20, random_state=0).fit(X)
    return float(km.inertia_), km.labels_


def load(name, mirror):
    """(X, devices, k, k' per device or int, description, optimum)."""
    if name in CELLS:
        X, _, devices = cells(0, **CELLS[name])
        opt, _ = optimum(X, 4)
        sizes = np.bincount(devices)
        return (X, devices, 4, 2, f"synthetic, {len(X)} x 10, 100 devices of {sizes.min()} to "
                f"{sizes.max()} points (median {np.median(sizes):.0f})", opt)
    if name in ("table1", "fig1-c0.1"):
        c = 100.0 if name == "table1" else 0.1
        mix = make_separated_mixture(16, 100, c, samples_per_cluster=200, device_clusters=4,
                                     devices_per_cluster=5, inactive_constant=0.1 * c,
                                     random_state=0)
        devices = structured_partition(mix.labels, 4, 5, random_state=0, groups=mix.groups)
        opt, _ = optimum(mix.X, 16)
        return (mix.X, devices, 16, 4, f"Gaussian mixture d = 100, k = 16, k' = 4, m0 = 5, "
                f"c = {c:g}, 200 points per cluster, {len(np.unique(devices))} devices", opt)
    from fedclust.data.femnist import leaf_femnist_dirs
    from fedclust.data.prepared import prepare_femnist, prepare_mnist, prepare_shakespeare
    source, partition = REAL[name]
    if source == "mnist":
        data = prepare_mnist(Path(mirror) / "mnist", max_samples=10000, seed=0)
    elif source == "femnist":
        data = prepare_femnist(leaf_dirs=leaf_femnist_dirs(mirror), max_writers=100, seed=0)
    else:
        data = prepare_shakespeare(Path(mirror) / "shakespeare" / "raw_data.txt", n_users=109,
                                   max_samples_per_user=200, min_samples=100, seed=0)
    X = data.X.astype(np.float64)
    opt, oracle = optimum(X, 10)
    if partition == "natural":
        devices, per_device = data.devices, 2
        how = f"natural partition ({len(np.unique(devices))} devices)"
    else:
        devices, per_device = subset_partition(oracle, 100, 2, random_state=0,
                                               return_device_clusters=True)
        how = "100 devices of 2 oracle clusters each"
    return X, devices, 10, per_device, f"{data.description}; k = 10, {how}", opt


def ours(X, devices, k, per_device, seed, **params):
    """Our KFed, fitted; and the seconds the fit took."""
    start = time.perf_counter()
    model = KFed(k, per_device, random_state=seed, **params).fit(X, devices=devices)
    return model, time.perf_counter() - start


def authors_run(kfed, X, devices, k, k_prime, seed, shuffle):
    """The authors' k-FED; returns (centers, induced labels)."""
    ids = np.unique(devices)
    order = np.random.default_rng(10_000 + seed).permutation(len(ids)) if shuffle else \
        np.arange(len(ids))
    rows = [np.flatnonzero(devices == ids[i]) for i in order]
    np.random.seed(seed)  # noqa: NPY002 (their SVD and k-means++ draw from the global state)
    local, centers = kfed([X[r] for r in rows], k_prime, k)
    local_global = assign(local, centers)[0]
    labels = np.empty(len(X), dtype=np.int64)
    at = 0
    for r in rows:
        n_local = min(len(r), k_prime)  # a device with at most k' points sends its points
        own = slice(at, at + n_local)
        labels[r] = local_global[own][assign(X[r], local[own])[0]]
        at += n_local
    return centers, labels


def start_spread(before, X, k, opt):
    """From the local centers of a fitted model: the cost over the optimum from every possible
    start device (one round / converge) and from the start today's criterion keeps; the share
    of local clusters of at most 2 points, and of the seeds farthest-point traversal adds
    (Algorithm 2, steps 3-6, over all starts) that are such."""
    points, devices = before.local_centers_, before.local_center_devices_
    starts = np.unique(devices)
    out = {}
    for rounds in (1, "converge"):
        costs = [kmeans_cost(X, server_clustering(points, devices, [z], k, rounds)[1]) / opt
                 for z in starts]
        kept = server_clustering(points, devices, starts, k, rounds)[1]
        out[rounds] = (np.min(costs), np.median(costs), np.max(costs),
                       kmeans_cost(X, kept) / opt)
    tiny = before.local_center_sizes_ <= 2
    added = np.concatenate([farthest_point_seeding(points, np.flatnonzero(devices == z), k)
                            [np.sum(devices == z):] for z in starts])
    out["tiny"] = (tiny.mean(), tiny[added].mean())
    return out


def summary(values) -> dict:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return {"mean": v.mean(), "median": np.median(v), "p90": np.quantile(v, 0.9),
            "max": v.max(), "above_1.5": np.mean(v > 1.5)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors-path", default=None,
                        help="checkout of github.com/metastableB/kfed (holds fkms/)")
    parser.add_argument("--mirror", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    kfed = None
    if args.authors_path:
        sys.path.insert(0, str(Path(args.authors_path).resolve()))
        from fkms.algorithms import kfed  # the authors' module, from outside the repository

    records, spreads, descriptions = [], {}, {}
    for name in args.datasets:
        X, devices, k, per_device, description, opt = load(name, args.mirror)
        descriptions[name] = description
        k_prime = int(np.max(per_device))
        print(f"{name}: {description}; optimum {opt:.6g}", flush=True)
        for seed in range(args.seeds):
            runs = {}
            before, runs[BEFORE] = ours(X, devices, k, per_device, seed, server_starts=1,
                                        server_lloyd_rounds=1)
            scored = {BEFORE: (before.cluster_centers_, before.labels_)}
            for method, params in ((CONVERGE, {"server_starts": 1}), (AFTER, {}),
                                   (ALL, {"server_starts": "all"})):
                model, runs[method] = ours(X, devices, k, per_device, seed, **params)
                scored[method] = (model.cluster_centers_, model.labels_)
            # the authors' server rule on our local centers: the first device's centers (the
            # smallest id, their device order), farthest points, Lloyd to convergence
            start = time.perf_counter()
            first = np.unique(before.local_center_devices_)[0]
            _, centers, tau, _, _ = server_clustering(
                before.local_centers_, before.local_center_devices_, [first], k, "converge")
            runs[HYBRID] = time.perf_counter() - start
            local_of_row = before.labels_.copy()  # rebuilt below from the local centers
            for dev in np.unique(devices):
                rows = np.flatnonzero(devices == dev)
                own = np.flatnonzero(before.local_center_devices_ == dev)
                local_of_row[rows] = tau[own][assign(X[rows], before.local_centers_[own])[0]]
            scored[HYBRID] = (centers, local_of_row)
            if kfed is not None:
                for method, shuffle in ((AUTHORS, False), (SHUFFLED, True)):
                    start = time.perf_counter()
                    try:
                        scored[method] = authors_run(kfed, X, devices, k, k_prime, seed, shuffle)
                    except Exception as error:  # noqa: BLE001 (their asserts, NaN means)
                        print(f"  {method} seed {seed} failed: {error!r}", flush=True)
                        scored[method] = None
                    runs[method] = time.perf_counter() - start
            for method, result in scored.items():
                record = {"dataset": name, "method": method, "seed": seed, "n": len(X),
                          "d": X.shape[1], "k": k, "k_prime": k_prime,
                          "devices": len(np.unique(devices)), "optimum": opt,
                          "seconds": runs[method]}
                if result is None:
                    record.update(cost_ratio=np.nan, induced_cost_ratio=np.nan)
                else:
                    centers, labels = result
                    record.update(cost_ratio=kmeans_cost(X, centers) / opt,
                                  induced_cost_ratio=partition_cost(X, labels) / opt)
                records.append(record)
            if seed == 0:
                spreads[name] = start_spread(before, X, k, opt)
        table = pd.DataFrame([r for r in records if r["dataset"] == name])
        for method, group in table.groupby("method", sort=False):
            s = summary(group["cost_ratio"])
            print(f"  {method:42s} mean {s['mean']:.3f} median {s['median']:.3f} "
                  f"max {s['max']:.3f} >1.5 {s['above_1.5']:.0%}", flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(records)
    frame["machine"] = f"{machine()}, scikit-learn {sklearn.__version__}"
    frame.to_csv(out / "kfed_authors.csv", index=False)
    (out / "kfed_authors.md").write_text(render(frame, spreads, descriptions, args))


def render(frame, spreads, descriptions, args) -> str:
    threads = os.environ.get("OMP_NUM_THREADS")
    command = (f"OMP_NUM_THREADS={threads} " if threads else "") + \
        "python benchmarks/kfed_authors.py" + (
        " --authors-path /work/scratch/kfed_authors" if args.authors_path else "") + (
        f" --seeds {args.seeds}" if args.seeds != 20 else "") + (
        f" --datasets {' '.join(args.datasets)}" if list(args.datasets) != list(DATASETS)
        else "")
    lines = [
        "# k-FED against the authors' public code (metastableB/kfed)\n",
        f"Machine: {frame['machine'].iloc[0]}. Date: {datetime.date.today().isoformat()}. "
        f"Command: `{command}`"
        + (" (the authors' code: a checkout of github.com/metastableB/kfed, commit 39879fc)."
           if args.authors_path else " (no authors' column: run with --authors-path)."),
        "",
        f"Cost of the returned centers (each point to its nearest center) over the best of "
        f"scikit-learn's KMeans(k, n_init=20) on the pooled data, {args.seeds} seeds; "
        "*induced*: the Eq. (1) cost of the induced clustering (Definition 3.3) over the same "
        "optimum. *before*: `KFed(server_starts=1, server_lloyd_rounds=1)` (Algorithm 2 as "
        "printed, the old default); *after*: today's default (32 starts, the server's Lloyd to "
        "convergence). See the script's docstring for every row and data set.",
        "",
    ]
    order = [BEFORE, CONVERGE, AFTER, ALL, HYBRID, AUTHORS, SHUFFLED]
    shown = [m for m in (BEFORE, AFTER, AUTHORS) if m in set(frame["method"])]
    lines += ["## Summary: cost / optimum, mean and worst over the seeds\n",
              "| data set | " + " | ".join(f"{m} (mean / max)" for m in shown) + " |",
              "|---|" + "---|" * len(shown)]
    for name, table in frame.groupby("dataset", sort=False):
        cells = []
        for method in shown:
            s = summary(table.loc[table["method"] == method, "cost_ratio"])
            cells.append(f"{s['mean']:.3f} / {s['max']:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    for name, table in frame.groupby("dataset", sort=False):
        lines += [f"## {name}\n", descriptions[name] + ".\n",
                  "| method | mean | median | p90 | max | share > 1.5 | induced mean | "
                  "induced max | s / fit |", "|---|---|---|---|---|---|---|---|---|"]
        for method in order:
            group = table[table["method"] == method]
            if group.empty:
                continue
            s, t = summary(group["cost_ratio"]), summary(group["induced_cost_ratio"])
            failed = int(group["cost_ratio"].isna().sum())
            note = f" ({failed} seeds failed)" if failed else ""
            lines.append(f"| {method}{note} | {s['mean']:.3f} | {s['median']:.3f} | "
                         f"{s['p90']:.3f} | {s['max']:.3f} | {s['above_1.5']:.0%} | "
                         f"{t['mean']:.3f} | {t['max']:.3f} | {group['seconds'].mean():.2f} |")
        spread = spreads[name]
        lines += ["", "Where the tail comes from (seed 0, the local centers of *before*): "
                  f"{spread['tiny'][0]:.1%} of the local clusters hold at most 2 points, and "
                  f"{spread['tiny'][1]:.0%} of the seeds farthest-point traversal adds (steps "
                  "3-6, over every start) are their centers; cost over the optimum from each "
                  "possible start device:", "",
                  "| server Lloyd | best start | median start | worst start | "
                  "kept by the criterion (all starts) |", "|---|---|---|---|---|"]
        for rounds, label in ((1, "one round"), ("converge", "to convergence")):
            lo, med, hi, kept = spread[rounds]
            lines.append(f"| {label} | {lo:.3f} | {med:.3f} | {hi:.3f} | {kept:.3f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

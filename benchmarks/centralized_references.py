"""What a user would pick instead on one machine: faiss, scikit-learn-intelex and scikit-learn
beside our Lloyd kernel and the distributed coreset, on the mixture of YearPredictionMSD's shape.

On ``fedclust.papers.coreset.experiments.make_msd_mixture`` (515,345 x 90, k = 50 by default;
float32, as the pipeline reads it), every Lloyd implementation starts from the same k-means++
centers (``fedclust.seeding.kmeans_plusplus``, one seed) and runs ``--iterations`` iterations
without a tolerance, so that a time per iteration compares like with like:

* ``fedclust.lloyd.lloyd`` (our kernel; it stops early only if no label changes),
* scikit-learn's ``KMeans(init=..., n_init=1, tol=0, algorithm="lloyd")``,
* scikit-learn-intelex's ``sklearnex.cluster.KMeans`` with the same arguments,
* faiss's ``faiss.Kmeans`` (``train(init_centroids=...)``, every row used:
  ``max_points_per_centroid`` raised past its default subsample of 256 rows per center),

and, solved to the end, the coreset figures' baseline (:func:`fedclust.centralized.best_kmeans`:
5 k-means++ restarts, Lloyd to convergence or 100 iterations, as ``coreset.n_init`` and
``coreset.max_iter`` of the paper profile) against ``DistributedCoreset`` (Algorithm 1 over a
star of ``--sites`` sites, uniform partition, ``--coreset-size`` points, the same restarts on
the coreset) as the federated alternative. Every cost is the k-means cost on the full data
computed by one function in float64 (:func:`fedclust.metrics.kmeans_cost`), reported over the
converged baseline's. One
thread for all (``--threads``): BLAS and OpenMP through threadpoolctl, faiss's OpenMP, and
oneDAL through ``daal4py.daalinit``. Times: best of ``--repeat`` wall times.

Optional dependencies (not in ``requirements.txt``): ``pip install -r
benchmarks/requirements.txt`` (faiss-cpu 1.15.1, scikit-learn-intelex 2026.2.0); a missing one
is left out of the table with its reason.

    python benchmarks/centralized_references.py [--n-samples 515345] [--iterations 20]

Writes ``benchmarks/results/centralized_references.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import best_of, machine  # noqa: E402

from fedclust import DistributedCoreset  # noqa: E402
from fedclust.centralized import best_kmeans  # noqa: E402
from fedclust.lloyd import lloyd  # noqa: E402
from fedclust.metrics import kmeans_cost  # noqa: E402
from fedclust.papers.coreset.experiments import make_msd_mixture  # noqa: E402
from fedclust.seeding import kmeans_plusplus  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"


def ours(X, init, iterations):
    result = lloyd(X, init, max_iter=iterations)
    return result.centers, result.n_iter


def scikit_learn(X, init, iterations):
    km = KMeans(len(init), init=init, n_init=1, max_iter=iterations, tol=0.0,
                algorithm="lloyd").fit(X)
    return km.cluster_centers_, km.n_iter_


def intelex(X, init, iterations):
    from sklearnex.cluster import KMeans as IntelKMeans

    km = IntelKMeans(len(init), init=init, n_init=1, max_iter=iterations, tol=0.0,
                     algorithm="lloyd").fit(X)
    return km.cluster_centers_, km.n_iter_


def faiss_kmeans(X, init, iterations):
    import faiss

    km = faiss.Kmeans(X.shape[1], len(init), niter=iterations, seed=0, verbose=False,
                      max_points_per_centroid=len(X))
    km.train(np.ascontiguousarray(X, dtype=np.float32),
             init_centroids=np.ascontiguousarray(init, dtype=np.float32))
    return km.centroids, iterations


METHODS = {"fedclust.lloyd (ours)": (ours, None),
           "scikit-learn KMeans": (scikit_learn, None),
           "scikit-learn-intelex KMeans": (intelex, "sklearnex"),
           "faiss Kmeans": (faiss_kmeans, "faiss")}


def _missing(module):
    if module is None:
        return None
    try:
        __import__(module)
    except ImportError as error:
        return f"not installed ({error})"
    return None


def _limit_threads(threads):
    try:
        import faiss
        faiss.omp_set_num_threads(threads)
    except ImportError:
        pass
    try:
        import daal4py
        daal4py.daalinit(threads)
    except ImportError:
        pass
    return threadpool_limits(threads)


def run(n_samples, iterations, repeat, threads, sites, coreset_size, seed=0):
    X, _ = make_msd_mixture(n_samples, random_state=seed)
    X = X.astype(np.float32)
    k = 50
    rows = []
    with _limit_threads(threads):
        init, _ = kmeans_plusplus(X, k, random_state=seed)
        for name, (fn, module) in METHODS.items():
            reason = _missing(module)
            if reason:
                print(f"{name}: {reason}", flush=True)
                rows.append({"method": name, "note": reason})
                continue
            fn(X[:20_000], init, 2)  # warm-up: compilation, library loading
            seconds, (centers, n_iter) = best_of(lambda fn=fn: fn(X, init, iterations),
                                                 repeat, warm_up=False)
            rows.append({"method": name, "iterations": int(n_iter), "seconds": seconds,
                         "seconds_per_iteration": seconds / max(int(n_iter), 1),
                         "cost": kmeans_cost(X.astype(np.float64), centers)})
            print(rows[-1], flush=True)
        seconds, solved = best_of(lambda: best_kmeans(X, k, range(5), max_iter=100), 1,
                                  warm_up=False)
        rows.append({"method": "best_kmeans, 5 restarts to convergence (the coreset "
                     "figures' baseline)", "iterations": np.nan, "seconds": seconds,
                     "seconds_per_iteration": np.nan, "reference": True,
                     "cost": kmeans_cost(X.astype(np.float64), solved.centers)})
        print(rows[-1], flush=True)
        devices = np.random.default_rng(seed).integers(sites, size=len(X))
        seconds, km = best_of(lambda: DistributedCoreset(k, coreset_size, n_init=5,
                                                         max_iter=100, random_state=seed)
                              .fit(X, devices=devices), repeat, warm_up=False)
        rows.append({"method": f"DistributedCoreset (star, {sites} sites, t={coreset_size})",
                     "iterations": np.nan, "seconds": seconds,
                     "seconds_per_iteration": np.nan,
                     "cost": kmeans_cost(X.astype(np.float64), km.cluster_centers_)})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    table["cost_over_baseline"] = table["cost"] / table.loc[
        table["reference"].fillna(False).astype(bool), "cost"].iloc[0]
    ours_per_iteration = table.loc[table["method"] == "fedclust.lloyd (ours)",
                                   "seconds_per_iteration"].iloc[0]
    table["time_per_iteration_over_ours"] = table["seconds_per_iteration"] / ours_per_iteration
    return table, X.shape


def write(table, shape, args):
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "centralized_references.csv", index=False)
    lines = [
        "# Centralized references beside our Lloyd kernel and the distributed coreset", "",
        f"Machine: {machine()}, {args.threads} thread(s). Data: the mixture of "
        f"YearPredictionMSD's shape, {shape[0]:,} x {shape[1]}, float32, k = 50. Every Lloyd "
        f"from the same k-means++ centers, {args.iterations} iterations, no tolerance; best of "
        f"{args.repeat} wall times (the converged baseline: one). Cost: k-means cost on the full "
        f"data (float64), over the converged baseline's (the fixed-iteration rows stop "
        f"before convergence). The machine is shared with other work: compare within this "
        f"table. Command: `python benchmarks/centralized_references.py --n-samples "
        f"{args.n_samples} --iterations {args.iterations} --repeat {args.repeat}`.", "",
        "| method | iterations | time (s) | time per iteration (s) | per iteration / ours | "
        "cost / baseline's |", "|---|---|---|---|---|---|"]
    for r in table.itertuples():
        if pd.isna(getattr(r, "seconds", np.nan)):
            lines.append(f"| {r.method} | {r.note} | | | | |")
            continue
        it = "" if pd.isna(r.iterations) else f"{int(r.iterations)}"
        per = "" if pd.isna(r.seconds_per_iteration) else f"{r.seconds_per_iteration:.3f}"
        rel = "" if pd.isna(r.time_per_iteration_over_ours) else \
            f"{r.time_per_iteration_over_ours:.2f}"
        lines.append(f"| {r.method} | {it} | {r.seconds:.2f} | {per} | {rel} | "
                     f"{r.cost_over_baseline:.4f} |")
    (OUT / "centralized_references.md").write_text("\n".join(lines) + "\n")
    print((OUT / "centralized_references.md").read_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=515_345)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sites", type=int, default=100)
    parser.add_argument("--coreset-size", type=int, default=10_000)
    args = parser.parse_args(argv)
    table, shape = run(args.n_samples, args.iterations, args.repeat, args.threads, args.sites,
                       args.coreset_size)
    write(table, shape, args)


if __name__ == "__main__":
    main()

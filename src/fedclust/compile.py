"""Compile the numba kernels ahead, where the package is installed: ``python -m
fedclust.compile`` fits every estimator with its defaults on small federations that take each
path a fit dispatches to (float64 and float32 rows, sample weights, a few large devices and
many small ones) and predicts, scores and transforms with it, then runs the paths only the
papers' printed settings take (k-FED from one device's centers, Elkan's bounds and k-median in
the coresets' weighted solves, a partition's own means), so that numba's on-disk cache (beside
the sources, or under ``NUMBA_CACHE_DIR``) holds every kernel a later fit or pipeline job
calls; a first fit in a fresh environment otherwise waits for their compilation (a minute for
k-FED on 2 cores). The float64 and float32 kernels compile in two processes at once where two
cores are free (numba compiles on one). Zhang et al.'s tree compiles on first use.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .runtime.processes import usable_cores

__all__ = ["compile_kernels", "compile_bytecode", "WARM_UP_ESTIMATORS", "DTYPES"]

#: The estimators whose fits are compiled ahead (by class name in :mod:`fedclust`).
WARM_UP_ESTIMATORS = ("DistributedLloyd", "LocalKMeans", "FederatedKMeans", "KFed",
                      "DistributedCoreset")
#: The row types compiled for: each dtype's kernels are their own numba specializations.
DTYPES = ("float64", "float32")
#: Settings beside the defaults that the papers print and that take other kernels: k-FED's
#: server seeded from one device's k' < k centers (Algorithm 2, step 2: the farthest-point
#: kernel adds the rest) and the coresets' k-median.
PAPER_SETTINGS = {"KFed": ({"server_starts": 1, "device_clusters": 2},),
                  "DistributedCoreset": ({"objective": "kmedian"},)}


def _federations(dtype):
    """Small federations of ``dtype`` rows that take each of a fit's Python-level paths: a
    few large devices (lock-step passes) and many small ones (device-by-device Lloyd), one
    with sample weights."""
    rng = np.random.default_rng(0)
    centers = 6.0 * rng.standard_normal((4, 8))
    X = (centers[rng.integers(0, 4, 2400)] + rng.standard_normal((2400, 8))).astype(dtype)
    few, many = np.arange(2400) % 4, np.arange(2400) % 240
    weights = rng.uniform(0.5, 2.0, 2400)
    yield X, few, None
    yield X, many, None
    yield X, few, weights


def _papers_solves(X, weights):
    """The single-machine paths of the papers' pipeline: the coresets' weighted solves
    (k-means with Elkan's bounds, k-median) and a partition's own means and cost."""
    from .centralized import best_kmeans
    from .metrics import cluster_means, partition_cost

    for w in (None, weights):
        labels = best_kmeans(X, 3, [0], sample_weight=w, algorithm="elkan").labels
        best_kmeans(X, 3, [0], sample_weight=w, objective="kmedian")
        partition_cost(X, labels, w)
        cluster_means(X, labels, 3)


def compile_kernels(estimators=WARM_UP_ESTIMATORS, *, dtypes=DTYPES, verbose=False) -> dict:
    """Fit, predict, score and transform with every estimator of ``estimators`` (class names
    of :mod:`fedclust`), with its defaults and :data:`PAPER_SETTINGS`, on
    :func:`_federations` of each of ``dtypes``, then run :func:`_papers_solves`, compiling
    and caching the kernels they call.

    Returns
    -------
    dict
        Seconds spent on each estimator (and on ``"papers' solves"``).
    """
    import fedclust

    unknown = sorted(set(estimators) - set(WARM_UP_ESTIMATORS))
    if unknown:
        raise ValueError(f"estimators: unknown {unknown}; choose from {list(WARM_UP_ESTIMATORS)}")
    unknown = sorted(set(dtypes) - set(DTYPES))
    if unknown:
        raise ValueError(f"dtypes: unknown {unknown}; choose from {list(DTYPES)}")
    seconds = {}

    def timed(name, work):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence on toy data is not the point here
            for dtype in dtypes:
                work(dtype)
        seconds[name] = time.perf_counter() - start
        if verbose:
            print(f"fedclust.compile: {name} ({', '.join(dtypes)}) {seconds[name]:.0f} s",
                  flush=True)

    def fits(Estimator, settings):
        def work(dtype):
            for options in ({}, *settings):
                for X, devices, weights in _federations(dtype):
                    est = Estimator(3, random_state=0, **options).fit(
                        X, devices=devices, sample_weight=weights)
                    est.predict(X)
                    est.score(X)
                    est.transform(X)
        return work

    def solves(dtype):
        X, _, weights = list(_federations(dtype))[-1]
        _papers_solves(X, weights)

    for name in estimators:
        timed(name, fits(getattr(fedclust, name), PAPER_SETTINGS.get(name, ())))
    timed("papers' solves", solves)
    return seconds


def compile_bytecode() -> bool:
    """Write the package's bytecode beside its sources (``__pycache__``), as pip does for
    installed packages but not for an editable install's: where ``PYTHONDONTWRITEBYTECODE`` is
    set, every process (each pipeline job, each Flower app) would otherwise compile the
    modules it imports from source. Files already up to date are left alone. Returns whether
    every module compiled (False, e.g., where the sources are read-only)."""
    import compileall

    package = Path(__file__).resolve().parent
    return bool(compileall.compile_dir(str(package), quiet=1, workers=1))


def _in_processes(estimators, dtypes, jobs: int) -> int:
    """Compile each of ``dtypes`` in a process of its own, ``jobs`` at a time (numba
    compiles on one core; the cache's writes are serialized by :mod:`fedclust._jit`).
    Returns the first non-zero exit status, or 0."""
    commands = [[sys.executable, "-m", "fedclust.compile", "--jobs", "1", "--estimators",
                 *estimators, "--dtypes", dtype] for dtype in dtypes]
    status, running = 0, []
    for command in commands:
        if len(running) == jobs:
            status = status or running.pop(0).wait()
        running.append(subprocess.Popen(command))
    for process in running:
        status = status or process.wait()
    return status


def main(argv=None) -> int:
    """``python -m fedclust.compile [--estimators NAME ...] [--dtypes D ...] [--jobs N]``."""
    parser = argparse.ArgumentParser(prog="python -m fedclust.compile",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--estimators", nargs="+", default=list(WARM_UP_ESTIMATORS),
                        choices=WARM_UP_ESTIMATORS, metavar="NAME",
                        help=f"which estimators (default: all of {', '.join(WARM_UP_ESTIMATORS)})")
    parser.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=DTYPES,
                        help="which row types (default: both)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes compiling at once, one row type each (default: the "
                             "cores this process may use, at most one per row type)")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1; got {args.jobs}")
    jobs = args.jobs or min(len(args.dtypes), usable_cores())
    start = time.perf_counter()
    compile_bytecode()
    if jobs > 1 and len(args.dtypes) > 1:
        status = _in_processes(args.estimators, args.dtypes, jobs)
    else:
        compile_kernels(args.estimators, dtypes=args.dtypes, verbose=True)
        status = 0
    print(f"fedclust.compile: done in {time.perf_counter() - start:.0f} s", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())

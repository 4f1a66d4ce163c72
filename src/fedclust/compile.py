"""Compile the numba kernels ahead, where the package is installed: ``python -m
fedclust.compile`` fits every estimator with its defaults on small federations that take each
path a fit dispatches to (float64 and float32 rows, sample weights, a few large devices and
many small ones) and predicts, scores and transforms with it, so that numba's on-disk cache
(beside the sources, or under ``NUMBA_CACHE_DIR``) holds every kernel a later fit calls; a
first fit in a fresh environment otherwise waits for their compilation (a minute for k-FED on
2 cores). Paths only the papers' settings take (Elkan's bounds, k-median, Zhang et al.'s tree)
compile on first use.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

__all__ = ["compile_kernels", "WARM_UP_ESTIMATORS"]

#: The estimators whose fits are compiled ahead (by class name in :mod:`fedclust`).
WARM_UP_ESTIMATORS = ("DistributedLloyd", "LocalKMeans", "FederatedKMeans", "KFed",
                      "DistributedCoreset")


def _federations():
    """Small federations that take each of a fit's Python-level paths: a few large devices
    (lock-step passes) and many small ones (device-by-device Lloyd), in float64 and float32,
    one with sample weights."""
    rng = np.random.default_rng(0)
    centers = 6.0 * rng.standard_normal((4, 8))
    X = centers[rng.integers(0, 4, 2400)] + rng.standard_normal((2400, 8))
    few, many = np.arange(2400) % 4, np.arange(2400) % 240
    weights = rng.uniform(0.5, 2.0, 2400)
    for rows in (X, X.astype(np.float32)):
        yield rows, few, None
        yield rows, many, None
        yield rows, few, weights


def compile_kernels(estimators=WARM_UP_ESTIMATORS, *, verbose=False) -> dict:
    """Fit, predict, score and transform with every estimator of ``estimators`` (class names
    of :mod:`fedclust`) on :func:`_federations`, compiling and caching the kernels they call.

    Returns
    -------
    dict
        Seconds spent on each estimator.
    """
    import fedclust

    unknown = sorted(set(estimators) - set(WARM_UP_ESTIMATORS))
    if unknown:
        raise ValueError(f"estimators: unknown {unknown}; choose from {list(WARM_UP_ESTIMATORS)}")
    seconds = {}
    for name in estimators:
        start = time.perf_counter()
        Estimator = getattr(fedclust, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence on toy data is not the point here
            for X, devices, weights in _federations():
                est = Estimator(3, random_state=0).fit(X, devices=devices,
                                                      sample_weight=weights)
                est.predict(X)
                est.score(X)
                est.transform(X)
        seconds[name] = time.perf_counter() - start
        if verbose:
            print(f"fedclust.compile: {name} {seconds[name]:.0f} s", flush=True)
    return seconds


def main(argv=None) -> int:
    """``python -m fedclust.compile [--estimators NAME ...]``."""
    parser = argparse.ArgumentParser(prog="python -m fedclust.compile",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--estimators", nargs="+", default=list(WARM_UP_ESTIMATORS),
                        choices=WARM_UP_ESTIMATORS, metavar="NAME",
                        help=f"which estimators (default: all of {', '.join(WARM_UP_ESTIMATORS)})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    compile_kernels(args.estimators, verbose=True)
    print(f"fedclust.compile: done in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

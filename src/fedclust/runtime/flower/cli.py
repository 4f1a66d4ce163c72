"""``python -m fedclust.runtime.flower``: run algorithms on processes of this machine, write
the app folder, split a data set into one file per device, summarize runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .app import write_app
from .launcher import launch, write_partitions
from .measurements import fit_in_process, measurements, summary_markdown
from .protocol import ALGORITHMS

#: Each algorithm's parameters in the demonstration runs (``random_state`` added per run).
DEMO_PARAMS = {
    "kfed": {"n_clusters": 4, "device_clusters": 2, "server_weighting": "uniform",
             "refine_max_iter": 0},
    "fedkmeans": {"n_clusters": 4, "n_rounds": 3, "tol": None, "init": "uniform",
                  "sample_fraction": 0.75},
    "localkmeans": {"n_clusters": 4, "local_steps": 2, "n_iter": 6},
    "distributed_lloyd": {"n_clusters": 4, "max_iter": 20, "tol": 0.0},
}


#: Where the fault runs kill a SuperNode: k-FED before its one round (the local step),
#: federated k-means before round 2 (after a round with every client).
KILL_BEFORE = {"kfed": {"exchange": "local", "round": 1},
               "fedkmeans": {"exchange": "round", "round": 2},
               "localkmeans": {"exchange": "round", "round": 2},
               "distributed_lloyd": {"exchange": "round", "round": 2}}


def demo_federation(n_devices: int, *, n_clusters: int = 4, rows_per_device: int = 100,
                    n_features: int = 5, random_state=0):
    """A Gaussian mixture of ``n_clusters`` well-separated clusters in which device ``z``
    holds rows of clusters ``z`` and ``z + 1`` (mod ``n_clusters``): k-FED's structured
    setting, two clusters per device. Returns ``X, devices``."""
    rng = np.random.default_rng(random_state)
    means = 8.0 * rng.standard_normal((n_clusters, n_features))
    devices = np.repeat(np.arange(n_devices), rows_per_device)
    cluster = (devices + rng.integers(0, 2, len(devices))) % n_clusters
    return means[cluster] + rng.standard_normal((len(devices), n_features)), devices


def demo_params(algorithm: str, X, *, random_state: int = 0) -> dict:
    """:data:`DEMO_PARAMS` of ``algorithm`` with ``random_state``; LocalKMeans starts from
    ``n_clusters`` rows of ``X`` drawn at random (the app takes given centres)."""
    params = {**DEMO_PARAMS[algorithm], "random_state": random_state}
    if algorithm in ("localkmeans", "distributed_lloyd"):
        rows = np.random.default_rng(random_state).choice(len(X), params["n_clusters"],
                                                          replace=False)
        params["init"] = np.asarray(X)[rows].tolist()
    return params


def run_and_measure(algorithm: str, *, n_devices: int, random_state: int = 0,
                    params: dict | None = None, kill: dict | None = None,
                    round_timeout: float = 60.0, workdir=None) -> pd.DataFrame:
    """One demonstration run (:func:`demo_federation`, :data:`DEMO_PARAMS`) on Flower and
    in process, measured (:func:`measurements`)."""
    X, devices = demo_federation(n_devices, random_state=random_state)
    params = {**demo_params(algorithm, X, random_state=random_state), **(params or {})}
    # fitted first: the in-process fit compiles the numba kernels into the source tree's
    # cache, which the ClientApp processes load instead of each compiling them
    fitted = fit_in_process(algorithm, params, X, devices)
    run = launch(algorithm, params, X, devices, kill=kill, round_timeout=round_timeout,
                 workdir=workdir)
    return measurements(run, fitted, algorithm=algorithm)


def main(argv=None) -> int:
    """``python -m fedclust.runtime.flower run|write-app ...`` (``--help`` for each)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m fedclust.runtime.flower",
                                     description="k-FED, federated k-means, LocalKMeans and "
                                                 "distributed Lloyd as Flower apps")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run algorithms on a SuperLink and N SuperNodes on "
                              "this machine and write the measurements (one tidy CSV)")
    run.add_argument("--algorithm", nargs="+", choices=sorted(ALGORITHMS),
                     default=sorted(ALGORITHMS))
    run.add_argument("--nodes", type=int, default=4, help="SuperNodes (devices), default 4")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--round-timeout", type=float, default=60.0)
    run.add_argument("--kill-device", type=int, default=None,
                     help="kill this device's SuperNode mid-fit (the fault run): before "
                          "k-FED's round, before federated k-means' round 2")
    run.add_argument("--out", required=True, help="the CSV to write")
    run.add_argument("--workdir", default=None, help="keep partitions, app and logs here")
    app = commands.add_parser("write-app", help="write the Flower app folder that `flwr run` "
                              "submits to a SuperLink")
    app.add_argument("directory")
    summary = commands.add_parser("summary", help="print the run-level measurements of one or "
                                  "more `run` CSVs as one Markdown table (the README's)")
    summary.add_argument("csv", nargs="+")
    split = commands.add_parser("partition", help="split a data set into one .npz per device "
                                "(a SuperNode's data-path)")
    split.add_argument("data", help=".npz with arrays X and devices (and w, optional)")
    split.add_argument("directory")
    args = parser.parse_args(argv)
    if args.command == "write-app":
        print(write_app(args.directory))
        return 0
    if args.command == "summary":
        print(summary_markdown(pd.concat([pd.read_csv(path, dtype={"lost_devices": str})
                                           for path in args.csv],
                                         ignore_index=True)), end="")
        return 0
    if args.command == "partition":
        with np.load(args.data) as data:
            missing = {"X", "devices"} - set(data.files)
            if missing:
                parser.error(f"{args.data} lacks the arrays {sorted(missing)} (it has "
                             f"{sorted(data.files)})")
            Path(args.directory).mkdir(parents=True, exist_ok=True)
            files = write_partitions(data["X"], data["devices"],
                                     data["w"] if "w" in data.files else None, args.directory)
        for device, path in files:
            print(f"device {device}: {path}")
        return 0
    if args.nodes < 1:
        parser.error(f"--nodes must be >= 1; got {args.nodes}")
    tables = []
    for algorithm in args.algorithm:
        kill = None if args.kill_device is None else \
            {"device": args.kill_device, **KILL_BEFORE[algorithm]}
        workdir = None if args.workdir is None else Path(args.workdir) / algorithm
        tables.append(run_and_measure(algorithm, n_devices=args.nodes, random_state=args.seed,
                                      kill=kill, round_timeout=args.round_timeout,
                                      workdir=workdir))
        print(f"{algorithm}: done", file=sys.stderr)
    table = pd.concat(tables, ignore_index=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"wrote {out} ({len(table)} rows)", file=sys.stderr)
    return 0



"""One coreset setting's runs at paper scale under two values of its knobs: the means side by side.

The evidence a change to a coreset knob that is not in the paper (``coreset.tol``,
``coreset.n_init``, ``coreset.max_iter``) needs before the paper profile takes it: one
partition on one graph (the paper profile's config/config.yaml: the mixture of
YearPredictionMSD's shape, 515,345 x 90, k = 50, 100 sites), ``--runs`` runs with their
baselines, computed once with the config as it is and once with ``--set`` applied, the same
seeds in both (a run's seeds are named by its index, a restart's by its number). For every
construction, network and coreset size: each variant's mean cost ratio with its standard
error, the paired difference and whether the new mean lies within one standard error of the
old; and each variant's CPU time. The two variants run side by side, one child process each,
every thread pool at one thread.

    python benchmarks/coreset_setting_means.py --set tol=1e-4

Writes ``benchmarks/results/<--out>.{csv,md}`` (per run, and the table; default
``coreset_setting_means``). ``--old`` takes the config.yaml side from an earlier table of the
same code and knobs instead of computing it again; ``--processes`` splits each variant's runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results"

CHILD = r"""
import json, sys, time, yaml
import pandas as pd
from fedclust.papers.coreset import experiments as ce
from fedclust.papers.coreset.declare import job_settings
config = yaml.safe_load(open(sys.argv[1]))
from snakemake.utils import update_config
overrides = json.loads(sys.argv[2])
partition, graph, out = sys.argv[3], sys.argv[4], sys.argv[6]
first, stop = map(int, sys.argv[5].split(":"))
runs = list(range(first, stop))
update_config(config["coreset"], overrides)
settings = job_settings(config, "msd_mixture")
X, _, _ = ce.load_data("msd_mixture", None, settings, base_seed=config["seed"])
k = ce.n_clusters_of("msd_mixture", settings)
start = time.process_time()
baseline = ce.baseline_runs(X, k, settings, dataset="msd_mixture", objective="kmeans",
                            base_seed=config["seed"], runs=runs, show_progress=True)
baseline_s = time.process_time() - start
start = time.process_time()
table = ce.setting_runs(X, k, settings, dataset="msd_mixture", objective="kmeans",
                        graphs=[graph], n_sites=settings["n_sites"], partition=partition,
                        runs=runs, base_seed=config["seed"], baseline=baseline,
                        show_progress=True)
setting_s = time.process_time() - start
pd.concat([baseline, table]).to_csv(out, index=False)
print(json.dumps({"baseline_s": baseline_s, "setting_s": setting_s}))
"""

KEYS = ["algorithm", "network", "coreset_size"]


def _value(text: str):
    """A ``--set`` value as YAML reads it (numbers, lists, booleans), with ``1e-4`` a number
    (YAML 1.1 reads it as a string)."""
    value = yaml.safe_load(text)
    try:
        return float(value) if isinstance(value, str) else value
    except ValueError:
        return value


def start_chunk(overrides: dict, args, runs: range, out: Path,
                log: Path) -> subprocess.Popen:
    """One child process computing ``runs`` (a range of run indices) of one variant."""
    env = {**os.environ, "PYTHONPATH": str((REPO / "src").resolve()), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(REPO / "config" / "config.yaml"),
         json.dumps(overrides), args.partition, args.graph, f"{runs.start}:{runs.stop}",
         str(out)],
        env=env, stdout=subprocess.PIPE, stderr=log.open("w"), text=True)


#: What the committed per-run table keeps: the compared quantities and what they depend on.
KEPT_METRICS = ("cost_ratio", "cost", "baseline_cost", "n_iter", "coreset_points",
                "points_transmitted")


def kept(runs: pd.DataFrame) -> pd.DataFrame:
    """The per-run rows of :data:`KEPT_METRICS`, with the ids that tell them apart."""
    columns = ["variant", "run", "seed", *KEYS, "metric", "value"]
    return runs.loc[runs["metric"].isin(KEPT_METRICS), columns]


def summary(runs: pd.DataFrame, labels: list[str], keys=tuple(KEYS),
            metric: str = "cost_ratio") -> pd.DataFrame:
    """Mean and standard error of ``metric`` per variant and cell (``keys``), the paired
    difference (new minus old, run by run) and whether the new mean is within one old
    standard error."""
    keys = list(keys)
    ratios = runs[runs["metric"] == metric]
    wide = ratios.pivot_table(index=keys + ["run"], columns="variant", values="value")
    rows = []
    for cell, group in wide.groupby(level=keys):
        old, new = group[labels[0]].to_numpy(), group[labels[1]].to_numpy()
        diff = new - old
        se = lambda v: float(np.std(v, ddof=1) / np.sqrt(len(v)))  # noqa: E731
        rows.append({**dict(zip(keys, cell, strict=True)), "runs": len(old),
                     "old_mean": old.mean(), "old_se": se(old), "new_mean": new.mean(),
                     "new_se": se(new), "diff_mean": diff.mean(), "diff_se": se(diff),
                     "within_one_se": bool(abs(new.mean() - old.mean()) <= se(old))})
    return pd.DataFrame(rows)


def comparison_cells(row) -> str:
    """A :func:`summary` row's markdown cells: old and new mean ± standard error, the paired
    difference ± its standard error, and whether the new mean is within one old standard
    error."""
    return (f"{row.old_mean:.4f} ± {row.old_se:.4f} | {row.new_mean:.4f} ± {row.new_se:.4f} | "
            f"{row.diff_mean:+.4f} ± {row.diff_se:.4f} | "
            f"{'yes' if row.within_one_se else '**no**'}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs="+", required=True, metavar="KEY=VALUE",
                        help="coreset knobs of the new variant, e.g. tol=1e-4 n_init=3")
    parser.add_argument("--both", nargs="*", default=[], metavar="KEY=VALUE",
                        help="coreset knobs of both variants (e.g. 'synthetic={n_samples: "
                             "20000}' for a quick look; the table names them)")
    parser.add_argument("--partition", default="uniform")
    parser.add_argument("--graph", default="erdos_renyi")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--processes", type=int, default=1,
                        help="child processes per variant, each a contiguous share of the "
                             "runs (a run's rows do not depend on how they are split)")
    parser.add_argument("--old", type=Path,
                        help="a per-run table this script wrote, whose config.yaml side is "
                             "taken instead of computing it again (same code and knobs only)")
    parser.add_argument("--out", default="coreset_setting_means",
                        help="name of the tables under benchmarks/results/ (.csv, .md)")
    args = parser.parse_args(argv)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["coreset"]

    def parsed(items, option):
        pairs = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep:
                parser.error(f"{option} {item!r}: give KEY=VALUE")
            if key not in config:
                parser.error(f"{option} {item!r}: {key!r} is not a coreset key of "
                             f"config/config.yaml")
            pairs[key] = _value(value)
        return pairs

    overrides, both = parsed(args.set, "--set"), parsed(args.both, "--both")
    labels = ["config.yaml (" + ", ".join(f"{k}={config[k]}" for k in overrides) + ")",
              ", ".join(f"{k}={v}" for k, v in overrides.items())]
    tables, seconds = [], {}
    variants = list(zip(labels, (both, {**both, **overrides}), strict=True))
    if args.old is not None:
        old = pd.read_csv(args.old)
        old = old[old["variant"] == old["variant"].iloc[0]].assign(variant=labels[0])
        if sorted(old["run"].unique()) != list(range(args.runs)):
            parser.error(f"--old {args.old}: its first variant does not hold runs "
                         f"0..{args.runs - 1}")
        tables.append(old)
        variants = variants[1:]
    bounds = np.linspace(0, args.runs, args.processes + 1).round().astype(int)
    with tempfile.TemporaryDirectory() as tmp:
        children = []
        for label, variant in variants:
            for first, stop in zip(bounds[:-1], bounds[1:], strict=True):
                out = Path(tmp) / f"{len(children)}.csv"
                log = Path(tmp) / f"{len(children)}.log"
                chunk = range(int(first), int(stop))
                children.append((label, out, log, start_chunk(variant, args, chunk, out, log)))
        start = time.perf_counter()
        for label, out, log, child in children:
            stdout, _ = child.communicate()
            if child.returncode:
                sys.exit(f"variant {label!r} failed:\n{log.read_text()[-3000:]}")
            spent = json.loads(stdout.strip().splitlines()[-1])
            total = seconds.setdefault(label, {"baseline_s": 0.0, "setting_s": 0.0})
            for key in total:
                total[key] += spent[key]
            table = pd.read_csv(out)
            table.insert(0, "variant", label)
            tables.append(table)
        wall = time.perf_counter() - start
    runs = pd.concat(tables, ignore_index=True)
    OUT.mkdir(exist_ok=True)
    kept(runs).to_csv(OUT / f"{args.out}.csv", index=False)
    table = summary(runs, labels)
    base = runs[runs["metric"].isin(["baseline_cost", "n_iter"])
                & runs["algorithm"].isna()].pivot_table(
        index="run", columns=["variant", "metric"], values="value")
    command = "python benchmarks/coreset_setting_means.py --set " + " ".join(args.set)
    scale = " with " + ", ".join(args.both) if args.both else ""
    if args.both:
        command += " --both " + " ".join(shlex.quote(item) for item in args.both)
    if args.processes != 1:
        command += f" --processes {args.processes}"
    if args.old is not None:
        command += f" --old {args.old}"
    if args.out != "coreset_setting_means":
        command += f" --out {args.out}"
    if (args.partition, args.graph, args.runs) != ("uniform", "erdos_renyi", 30):
        command += f" --partition {args.partition} --graph {args.graph} --runs {args.runs}"
    lines = [f"# A coreset setting's {args.runs} runs at {'a changed' if args.both else 'paper'}"
             f" scale: {labels[0]} against {labels[1]}", "",
             f"Machine: {machine()}. The {args.partition} partition on {args.graph}, 100 sites, "
             f"the paper profile's config/config.yaml{scale}, {args.runs} runs with their "
             f"baselines, the same seeds in both variants, each in {args.processes} "
             f"process(es) on one thread, side by side ({wall / 60:.1f} min of wall time"
             f"{'; the config.yaml side taken from ' + str(args.old) if args.old else ''}). "
             f"Command: "
             f"`{command}`.", "",
             "| variant | baseline CPU (s) | setting CPU (s) | baseline Lloyd iterations "
             "(mean) | baseline cost (mean ± SE) |", "|---|---|---|---|---|"]
    for label in labels:
        cost = base[(label, "baseline_cost")]
        spent = seconds.get(label)
        cpu = (f"{spent['baseline_s']:.0f} | {spent['setting_s']:.0f}" if spent else
               f"taken from {args.old.name} | taken from {args.old.name}")
        lines.append(f"| {label} | {cpu} | "
                     f"{base[(label, 'n_iter')].mean():.1f} | {cost.mean():.6g} ± "
                     f"{cost.std(ddof=1) / np.sqrt(len(cost)):.2g} |")
    lines += ["", "Cost ratio (a run's cost on the global data over its baseline's), mean ± "
              "standard error over the runs; the difference is new minus old, run by run.", "",
              "| construction | network | t | old | new | difference | new mean within one "
              "old SE |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.algorithm} | {r.network} | {int(r.coreset_size)} | "
                     f"{comparison_cells(r)} |")
    lines += ["", f"{int(table.within_one_se.sum())} of {len(table)} cells within one standard "
              "error."]
    (OUT / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    print((OUT / f"{args.out}.md").read_text())


if __name__ == "__main__":
    main()

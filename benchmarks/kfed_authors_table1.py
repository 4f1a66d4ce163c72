"""k-FED's Table 1 by the authors' public code (``metastableB/kfed``) beside ours, on the same data.

    python benchmarks/kfed_authors_table1.py --authors-path DIR [--runs 10]

Table 1 of Dennis, Li & Smith (ICML 2021) prints k-FED's accuracy on five Gaussian mixtures
(``d``, ``k``) with ``k' = sqrt(k)``, ``m0 = 5``, ``c = 100``, mean ± std over 10 runs. Every
run here is one run of the pipeline's Table 1 experiment: the same seed
(:func:`fedclust.papers.kfed.synthetic.mixture_run_seed` with the config's ``seed`` and
settings), hence the same mixture and structured partition
(:func:`~fedclust.papers.kfed.synthetic.mixture_federation`). On it run

* ``ours``: :func:`~fedclust.papers.kfed.synthetic.mixture_trial` with the config's
  settings, the pipeline's number for that run;
* ``authors``: ``fkms.algorithms.kfed`` imported from ``--authors-path`` (a checkout of
  github.com/metastableB/kfed outside the repository), the devices in the order of their ids,
  NumPy's global seed set to the run's seed, each point labelled by its device's nearest local
  center's global cluster (Definition 3.3; ``kfed_authors.authors_run``).

Both are scored by :func:`fedclust.metrics.clustering_accuracy` against the planted labels.
Writes ``benchmarks/results/kfed_authors_table1.{csv,md}``; the pipeline's k-FED claims read the
CSV (``fedclust.papers.kfed.declare.AUTHORS_TABLE1``) and put the authors' mean beside the
paper's and ours in a ``reported`` row per Table 1 row.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import machine  # noqa: E402
from kfed_authors import authors_run  # noqa: E402

from fedclust.metrics import clustering_accuracy  # noqa: E402
from fedclust.papers.kfed.synthetic import (  # noqa: E402
    device_clusters_for,
    mixture_federation,
    mixture_run_seed,
    mixture_trial,
)


def table1_settings(config_path: Path) -> tuple[int, dict]:
    """The config's base seed and its ``kfed.table1`` section."""
    config = yaml.safe_load(config_path.read_text())
    return int(config["seed"]), config["kfed"]["table1"]


def run_row(kfed, base_seed: int, section: dict, d: int, k: int, runs: int) -> list[dict]:
    """Both implementations on every run of Table 1's row ``(d, k)``."""
    k_prime = device_clusters_for(k, section["device_clusters"])
    c = float(section["separation"])
    common = dict(n_features=d, n_clusters=k, device_clusters=k_prime,
                  devices_per_cluster=int(section["devices_per_cluster"]), separation=c,
                  samples_per_cluster=int(section["samples_per_cluster"]),
                  inactive_to_active=float(section["inactive_to_active"]))
    out = []
    for run in range(runs):
        seed = mixture_run_seed(base_seed, "table1", d, k, c, run)
        ours = mixture_trial(**common, seed=seed,
                             server_lloyd_rounds=section["server_lloyd_rounds"],
                             server_starts=section["server_starts"])
        mix, devices = mixture_federation(**common, seed=seed)
        _, labels = authors_run(kfed, mix.X, devices, k, k_prime, seed % 2**32, shuffle=False)
        for method, accuracy in (("ours", ours["accuracy"]),
                                 ("authors", clustering_accuracy(mix.labels, labels))):
            out.append({"n_features": d, "n_clusters": k, "device_clusters": k_prime,
                        "run": run, "seed": seed, "method": method, "metric": "accuracy",
                        "value": float(accuracy)})
        print(f"d={d} k={k} run {run}: ours {ours['accuracy']:.4f}, authors "
              f"{out[-1]['value']:.4f}", flush=True)
    return out


def render(table: pd.DataFrame, printed: dict, header: str) -> str:
    lines = [header, "", "| d | k | k' | paper (mean ± std, 10 runs) | ours | authors' code |",
             "|---|---|---|---|---|---|"]
    for (d, k), sub in table.groupby(["n_features", "n_clusters"], sort=False):
        cells = []
        for method in ("ours", "authors"):
            v = sub[sub["method"] == method]["value"]
            cells.append(f"{v.mean():.4f} ± {v.std(ddof=1):.4f} ({len(v)})")
        p = printed[(d, k)]
        lines.append(f"| {d} | {k} | {int(sub['device_clusters'].iloc[0])} | "
                     f"{p['value']:.4f} ± {p['std']:.4f} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors-path", required=True,
                        help="checkout of github.com/metastableB/kfed (holds fkms/)")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per row (default: the config's, the paper's 10)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    authors = Path(args.authors_path).resolve()
    sys.path.insert(0, str(authors))
    from fkms.algorithms import kfed  # the authors' module, from outside the repository

    base_seed, section = table1_settings(args.config)
    runs = args.runs or int(section["runs"])
    targets = yaml.safe_load((ROOT / "config" / "paper_targets.yaml").read_text())
    printed = {(int(r["n_features"]), int(r["n_clusters"])): r
               for r in targets["kfed"]["table1"]["rows"]}
    records = []
    for setting in section["settings"]:
        records += run_row(kfed, base_seed, section, int(setting["n_features"]),
                           int(setting["n_clusters"]), runs)
    table = pd.DataFrame(records)
    host = machine()
    table["machine"] = host
    args.out.mkdir(exist_ok=True)
    table.to_csv(args.out / "kfed_authors_table1.csv", index=False)
    header = (
        "# k-FED's Table 1: the authors' code beside the paper and ours\n\n"
        f"Machine: {host}. Date: {datetime.date.today()}. Command: `python "
        f"benchmarks/kfed_authors_table1.py --authors-path {args.authors_path}` (the authors' "
        "code: a checkout of github.com/metastableB/kfed, commit 39879fc, outside the "
        "repository). Accuracy of the induced clustering against "
        f"the planted one, mean ± std over {runs} runs (count in brackets); every run is the "
        "pipeline's Table 1 run of that seed, the same data for both implementations "
        "(see the script's docstring). The paper's column as printed (Table 1, over 10 runs).")
    (args.out / "kfed_authors_table1.md").write_text(render(table, printed, header))
    print((args.out / "kfed_authors_table1.md").read_text())


if __name__ == "__main__":
    main()

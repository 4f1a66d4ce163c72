"""Federated K-Means: the authors' code (ourownstory/federated_kmeans) at Fig 5's settings.

    python benchmarks/fedkmeans_authors.py --authors-path DIR [--seeds 10] [--rounds 200]
                                           [--figures fig5a fig5b] [--betas 1.0 0.1 ...]
                                           [--reassign-after 10] [--quick] [--out DIR]

Triebe & Rajagopal (2019), Sec. 3.3 ("Varying Client Learning Rate"): the client learning rate
beta in ``[1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01]`` (the x axis of the authors' result images)
at ``C = 0.1``, ``T = 200``, ``B = infinity``, ``alpha = (1, 0.5)`` (server rate 1, momentum
0.5), ``E = 1`` (Fig 5(a), ``fig5a``) and ``E = 10`` (Fig 5(b), ``fig5b``). For every figure,
beta and seed ``0 .. --seeds - 1`` one run of

* ``utils_data.load_federated(dummy=True, clusters=5, seed=seed)``: their synthetic data, 100
  clients of 10 one-dimensional rows, client ``i`` from the Gaussian of mean ``i mod 5 + 1``;
  the first 50 clients train, the last 50 are the test clients. The paper's scale 0.2 is not
  a parameter of ``load_federated``: their ``create_dummy_data`` (which has it, default 0.5)
  is wrapped to receive ``scale=--scale``, nothing else changed;
* ``kmeans_python.KMeansFederated(n_clusters=5, sample_fraction=0.1, epochs_per_round=E,
  max_iter=T, learning_rate=1.0, epoch_lr=beta, momentum=0.5, adaptive_lr=None,
  reassign_min=0.01, reassign_after=--reassign-after, init_centroids="random")`` fitted on the
  training clients (their random start: uniform in ``[0, K + 1]``);
* ``utils_stats.evaluate`` on the train and test clients, once with ``use_metric="euclidean"``
  (the mean Euclidean distance of a row to its centroid, ``mean_distance``) and once with
  ``"davies_bouldin"`` (their own Davies-Bouldin index), both on the same fit.

NumPy's global seed and Python's ``random`` (their client sampling, ``random.sample``, which
their code never seeds) are set to the seed before each run. The authors' modules are imported
from ``--authors-path`` (a checkout of github.com/ourownstory/federated_kmeans, commit e8e6f89;
``<path>/clustering`` is put on ``sys.path``); the files used are checked against that
commit's blobs and the .md says whether they match.

``--quick``: 2 seeds, 20 rounds, betas 1.0 and 0.1 (a smoke test, not a result).

Writes ``benchmarks/results/fedkmeans_authors.csv`` (tidy: figure, beta, seed, split, metric,
value) and ``benchmarks/results/fedkmeans_authors.md`` (the settings, paper / their code / what
ran, and per figure and beta the test clients' mean +- std over the seeds beside the paper's
values from ``config/paper_targets.yaml``, ``fedkmeans.sweeps.read_from_figures``).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import hashlib
import os
import random
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import machine  # noqa: E402

from fedclust.io import write_table, write_text  # noqa: E402

AUTHORS_COMMIT = "e8e6f89fb3b7c7209d14c1c2f66b21b694199a4f"
#: git blob ids of the files used, at AUTHORS_COMMIT (``git ls-tree``).
AUTHORS_BLOBS = {"kmeans_python.py": "424b36b90e7772d7865308978d9383bec5807f95",
                 "utils_data.py": "f4da76a7ed2293110d18645fdb3dd23b57582769",
                 "utils_stats.py": "0420189c48e75808bf953fd8485b744c2834f850"}
TARGETS = ROOT / "config" / "paper_targets.yaml"

#: Fig 5's settings as the paper prints them (Sec. 2, captions of Sec. 3.3).
FIGURES = {"fig5a": 1, "fig5b": 10}  # local epochs E
BETAS = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01)  # x axis of the authors' result images
SAMPLE_FRACTION = 0.1  # C
ROUNDS = 200  # T
SERVER_LR = 1.0  # alpha = (1, 0.5): the rate ...
MOMENTUM = 0.5  # ... and the momentum (their code's MOMENTUM)
SCALE = 0.2  # Sec. 2.1
SEEDS = 10  # Sec. 2.2
N_CLUSTERS = 5  # the 5 Gaussians (run_clustering_federated's NUM_CLUSTERS)
REASSIGN = (0.01, 10)  # their code's REASSIGN (the paper: 0.01 of all rows, 20 rounds)
QUICK = dict(seeds=2, rounds=20, betas=(1.0, 0.1))
METRICS = {"mean_distance": "euclidean", "davies_bouldin": "davies_bouldin"}
SPLITS = ("train", "test")


def run_defaults(quick: bool) -> dict:
    """Seeds, rounds and betas of a full run (the paper's) or of ``--quick``."""
    return QUICK if quick else dict(seeds=SEEDS, rounds=ROUNDS, betas=BETAS)


def git_blob_id(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 (git's id)


def import_authors(path, scale):
    """The authors' modules from ``<path>/clustering``, their dummy data's scale set to
    ``scale``; and the names of the files that differ from AUTHORS_COMMIT."""
    folder = Path(path).resolve() / "clustering"
    if not (folder / "kmeans_python.py").exists():
        raise SystemExit(f"{folder}/kmeans_python.py not found: --authors-path must be a "
                         "checkout of github.com/ourownstory/federated_kmeans")
    differ = [name for name, blob in AUTHORS_BLOBS.items()
              if git_blob_id(folder / name) != blob]
    os.environ.setdefault("MPLBACKEND", "Agg")  # their modules import matplotlib.pyplot
    sys.path.insert(0, str(folder))
    import kmeans_python  # the authors' modules, from outside the repository
    import utils_data
    import utils_stats

    # load_federated -> load_federated_dummy -> create_dummy_data(...) without a scale (its
    # default is 0.5): give it the paper's scale, looked up at call time from the module.
    utils_data.create_dummy_data = functools.partial(utils_data.create_dummy_data, scale=scale)
    return kmeans_python, utils_data, utils_stats, differ


def run_one(authors, *, epochs, beta, seed, rounds, reassign_after):
    """One fit of their KMeansFederated; {(split, metric): value} and the fit's seconds."""
    kmeans_python, utils_data, utils_stats, _ = authors
    np.random.seed(seed)  # noqa: NPY002 (their data and start draw from the global state)
    random.seed(seed)  # their client sampling (random.sample), unseeded in their code
    x, _ = utils_data.load_federated(seed=seed, dummy=True, clusters=N_CLUSTERS)
    kmeans = kmeans_python.KMeansFederated(
        n_clusters=N_CLUSTERS, sample_fraction=SAMPLE_FRACTION, epochs_per_round=epochs,
        max_iter=rounds, init_centroids="random", seed=seed, learning_rate=SERVER_LR,
        adaptive_lr=None, epoch_lr=beta, momentum=MOMENTUM, reassign_min=REASSIGN[0],
        reassign_after=reassign_after)
    start = time.perf_counter()
    kmeans.fit(X=x["train"], record_at=None)
    seconds = time.perf_counter() - start
    scores = {}
    with warnings.catch_warnings():  # their Davies-Bouldin: an empty cluster's mean is NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        for metric, use_metric in METRICS.items():
            # evaluate concatenates the clients in place: give it a copy of the dict
            out = utils_stats.evaluate(kmeans=kmeans, x=dict(x), splits=list(SPLITS),
                                       use_metric=use_metric, federated=True)
            for split in SPLITS:
                scores[split, metric] = float(out[split])
    return scores, seconds


def paper_values(path=TARGETS) -> dict:
    """{figure: {metric: {beta: (value, sd)}}} from paper_targets.yaml."""
    figures = yaml.safe_load(Path(path).read_text())["fedkmeans"]["sweeps"][
        "read_from_figures"]["figures"]
    out = {}
    for fig in FIGURES:
        entry = figures[fig]
        out[fig] = {metric: {float(beta): (float(value), float(entry["sd"][metric][beta]))
                             for beta, value in entry["values"][metric].items()}
                    for metric in METRICS}
        out[fig]["file"] = entry.get("file", "")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors-path", required=True,
                        help="checkout of github.com/ourownstory/federated_kmeans (holds "
                             "clustering/)")
    parser.add_argument("--seeds", type=int, default=None, help=f"default {SEEDS}")
    parser.add_argument("--rounds", type=int, default=None, help=f"default {ROUNDS}")
    parser.add_argument("--betas", type=float, nargs="+", default=None)
    parser.add_argument("--figures", nargs="+", default=list(FIGURES), choices=list(FIGURES))
    parser.add_argument("--scale", type=float, default=SCALE)
    parser.add_argument("--reassign-after", type=int, default=REASSIGN[1],
                        help="rounds below 0.01 of the round's rows before a centroid is "
                             "reassigned (their code 10, the paper 20)")
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds, 20 rounds, betas 1.0 and 0.1 (a smoke test)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    defaults = run_defaults(args.quick)
    args.seeds = args.seeds if args.seeds is not None else defaults["seeds"]
    args.rounds = args.rounds if args.rounds is not None else defaults["rounds"]
    args.betas = list(args.betas if args.betas is not None else defaults["betas"])

    authors = import_authors(args.authors_path, args.scale)
    records, seconds, failures = [], {}, []
    started = time.perf_counter()
    for fig in args.figures:
        epochs = FIGURES[fig]
        for beta in args.betas:
            fits = []
            for seed in range(args.seeds):
                try:
                    scores, fit_seconds = run_one(authors, epochs=epochs, beta=beta, seed=seed,
                                                  rounds=args.rounds,
                                                  reassign_after=args.reassign_after)
                except Exception as error:  # noqa: BLE001 (their code's failures are results)
                    print(f"  {fig} beta {beta:g} seed {seed} failed: {error!r}", flush=True)
                    failures.append((fig, beta, seed, repr(error)))
                    scores = {(s, m): np.nan for s in SPLITS for m in METRICS}
                    fit_seconds = np.nan
                fits.append(fit_seconds)
                for (split, metric), value in scores.items():
                    records.append({"figure": fig, "beta": beta, "seed": seed, "split": split,
                                    "metric": metric, "value": value})
            seconds[fig, beta] = float(np.nanmean(fits)) if np.isfinite(fits).any() else np.nan
            test = [r["value"] for r in records[-len(SPLITS) * len(METRICS) * args.seeds:]
                    if r["split"] == "test" and r["metric"] == "mean_distance"]
            print(f"{fig} (E={epochs}) beta {beta:g}: test mean distance "
                  f"{np.nanmean(test):.4f} +- {np.nanstd(test):.4f}, "
                  f"{seconds[fig, beta]:.2f} s per fit", flush=True)
    wall = time.perf_counter() - started

    frame = pd.DataFrame(records, columns=["figure", "beta", "seed", "split", "metric",
                                           "value"])
    out = Path(args.out)
    write_table(frame, out / "fedkmeans_authors.csv")
    write_text(render(frame, args, authors[3], seconds, wall, failures, paper_values()),
               out / "fedkmeans_authors.md")
    print(f"wrote {out}/fedkmeans_authors.{{csv,md}} ({wall:.0f} s)")


def mean_sd(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return (v.mean(), v.std()) if len(v) else (np.nan, np.nan)  # ddof 0, as their np.std


def render(frame, args, differ, seconds, wall, failures, paper) -> str:
    threads = os.environ.get("OMP_NUM_THREADS")
    defaults = run_defaults(args.quick)
    options = [f"--authors-path {args.authors_path}"] + (["--quick"] if args.quick else [])
    if args.seeds != defaults["seeds"]:
        options.append(f"--seeds {args.seeds}")
    if args.rounds != defaults["rounds"]:
        options.append(f"--rounds {args.rounds}")
    if tuple(args.betas) != tuple(defaults["betas"]):
        options.append("--betas " + " ".join(f"{b:g}" for b in args.betas))
    if list(args.figures) != list(FIGURES):
        options.append("--figures " + " ".join(args.figures))
    if args.scale != SCALE:
        options.append(f"--scale {args.scale:g}")
    if args.reassign_after != REASSIGN[1]:
        options.append(f"--reassign-after {args.reassign_after}")
    command = (f"OMP_NUM_THREADS={threads} " if threads else "") + \
        "python benchmarks/fedkmeans_authors.py " + " ".join(options)
    checked = ("the files used (" + ", ".join(AUTHORS_BLOBS) + ") match that commit byte for "
               "byte" if not differ else "**the checkout's " + ", ".join(differ) +
               " differ from that commit**")
    reduced = []
    if args.quick:
        reduced.append("**QUICK RUN (--quick): a smoke test, not a result.**")
    if args.seeds != SEEDS:
        reduced.append(f"**{args.seeds} seeds, not the paper's {SEEDS}.**")
    if args.rounds != ROUNDS:
        reduced.append(f"**{args.rounds} rounds, not the paper's T = {ROUNDS}.**")
    lines = [
        "# Federated K-Means: the authors' code at Fig 5's settings (client learning rate)\n",
        f"Machine: {machine()}. Date: {datetime.date.today().isoformat()}. "
        f"Command: `{command}`. Wall time of the runs: {wall:.0f} s. The authors' code: "
        f"github.com/ourownstory/federated_kmeans, commit {AUTHORS_COMMIT[:7]} ({checked}), "
        "imported from the checkout, not copied.",
        "",
        *(r + "\n" for r in reduced),
        "Triebe & Rajagopal (2019), Sec. 3.3: the client learning rate beta varied at C = 0.1, "
        "T = 200, B = infinity, alpha = (1, 0.5); Fig 5(a) E = 1, Fig 5(b) E = 10. Each run: "
        "their `load_federated(dummy=True, clusters=5, seed=seed)`, their `KMeansFederated` "
        "fitted on the training clients, their `evaluate` on the train and test clients with "
        "`use_metric=\"euclidean\"` (mean distance of a row to its centroid) and "
        "`\"davies_bouldin\"` (their own index) on the same fit. Seeds "
        f"0..{args.seeds - 1}: before each run NumPy's global seed and Python's `random` "
        "(their client sampling, which their code never seeds) are set to the seed, so a seed "
        "has the same data and start in every figure and beta. "
        "Mean +- std over the seeds (std with ddof 0, as their `np.std`).",
        "",
        "## Settings\n",
        "| setting | paper | authors' code default | what we ran |",
        "|---|---|---|---|",
        "| clients | 50 (Sec. 2.1) | `load_federated_dummy`: 100 clients, the first 50 "
        "train, the last 50 test | their default (50 train, 50 test clients) |",
        "| rows per client, dimension | 10, 1 (Sec. 2.1) | 10, 1 | their default (= paper) |",
        "| Gaussians | means 1..5, each client from one (Sec. 2.1) | means 1..5 "
        "(`clusters=5`), client i from mean i mod 5 + 1 | their default |",
        f"| Gaussian scale | 0.2 (Sec. 2.1) | 0.5 (`create_dummy_data`; `load_federated` does "
        f"not pass a scale) | **{args.scale:g}**: their `create_dummy_data` wrapped to get "
        "`scale=`, called by their `load_federated` |",
        "| K | not printed (the 5 Gaussians) | 5 | 5 |",
        "| start | \"randomly\" (Algorithm 1) | uniform in [0, K + 1] (`init_centroids="
        "\"random\"`) | their default |",
        f"| C (sample fraction) | 0.1 | sweeps [0.01, 0.03, 0.1, 0.3, 1, central] | "
        f"{SAMPLE_FRACTION:g} |",
        f"| T (rounds) | 200 | 100 (`ROUNDS`) | **{args.rounds}** |",
        "| E (local epochs) | 1 (Fig 5a), 10 (Fig 5b) | 5 (`EPOCHS`) | " +
        ", ".join(f"{FIGURES[f]} ({f})" for f in args.figures) + " |",
        "| B (batch) | infinity (full batch) | full batch (`batch_size` is stored, unused) | "
        "full batch (not a knob) |",
        f"| alpha, server rate | 1 | 0.5 (`LR`) | {SERVER_LR:g} |",
        f"| server momentum | 0.5 (alpha = (1, 0.5)) | 0.5 (`MOMENTUM`, v = 0.5 v + 0.5 u) | "
        f"{MOMENTUM:g}, their rule |",
        "| beta, client rate | " + ", ".join(f"{b:g}" for b in BETAS) + " (the authors' "
        "result images' x axis) | 0.5 (`EPOCH_LR`) | " +
        ", ".join(f"{b:g}" for b in args.betas) + " |",
        "| adaptive server rate | not in the paper | None (`LR_AD`) | None |",
        f"| reassignment threshold | 0.01 of all clients' rows (Sec. 2.3) | 0.01 of the "
        f"round's rows (`REASSIGN[0]`) | {REASSIGN[0]:g} of the round's rows (the basis is not "
        "a knob) |",
        f"| reassignment wait | 20 rounds (Sec. 2.3) | 10 rounds (`REASSIGN[1]`) | "
        f"**{args.reassign_after}** rounds" + (" (their code's; `--reassign-after 20` runs "
                                              "the paper's)" if args.reassign_after == 10
                                              else "") + " |",
        f"| seeds | 10 runs (Sec. 2.2) | 10 at C = 0.1 (`num_seeds`), drawn at random from "
        f"[0, 10^7), client sampling unseeded | **{args.seeds}**: 0..{args.seeds - 1}, "
        "NumPy and `random` seeded |",
        "| metrics | mean Euclidean intra-cluster distance, Davies-Bouldin | one per run "
        "(`use_metric`, \"davies_bouldin\" as committed) | both, from their `evaluate` on one "
        "fit |",
        "",
    ]
    test = frame[frame["split"] == "test"]
    train = frame[frame["split"] == "train"]
    for fig in args.figures:
        target = paper[fig]
        lines += [f"## {fig}: E = {FIGURES[fig]}\n",
                  f"Test clients (their `load_federated` test split), {args.seeds} seeds. "
                  "*paper*: the mean and +-1 std shading read from the authors' result image "
                  f"`{target['file']}` (`config/paper_targets.yaml`, "
                  "`fedkmeans.sweeps.read_from_figures.figures." + fig + "`); "
                  "*diff*: ours - paper. Train clients' means beside them.\n",
                  "| beta | mean distance (authors' code) | paper | diff | Davies-Bouldin "
                  "(authors' code) | paper | diff | train: distance / DB | s / fit |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for beta in args.betas:
            cells = [f"{beta:g}"]
            for metric in METRICS:
                rows = test[(test["figure"] == fig) & (test["beta"] == beta) &
                            (test["metric"] == metric)]
                m, s = mean_sd(rows["value"])
                ref = target[metric].get(float(beta))
                cells += [f"{m:.3f} ± {s:.3f}",
                          f"{ref[0]:.3f} ± {ref[1]:.3f}" if ref else "n/a",
                          f"{m - ref[0]:+.3f}" if ref else "n/a"]
            tr = [mean_sd(train[(train["figure"] == fig) & (train["beta"] == beta) &
                                (train["metric"] == metric)]["value"])[0] for metric in METRICS]
            cells += [f"{tr[0]:.3f} / {tr[1]:.3f}", f"{seconds[fig, beta]:.2f}"]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if failures:
        lines += ["## Failed runs\n"] + [f"- {f} beta {b:g} seed {s}: `{e}`"
                                         for f, b, s, e in failures] + [""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

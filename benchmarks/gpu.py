"""The pipeline's torch work on a CPU against a CUDA GPU: k-FED's Table 2 and the CNN embeddings.

Measured in one call, on one machine (its CPU with every core torch uses, and its GPU):

* **Table 2, per round** (``table2_rounds``): every cell and run of the paper profile's Table 2
  trained together (:func:`fedclust.papers.kfed.applications.table2_cells`), timed over
  the rounds only (the rotated data and k-FED's one-shot clusterings are built once and shared
  by both devices), in its two phases: the first rounds, while IFCA's 48 random starts run
  side by side, and the rounds after them (IFCA with one start). The GPU's phase-2 rounds
  are run twice and compared: the same seed must give the same numbers.
* **Table 2 at paper scale** (``table2_full``): all 12 cells x 2 runs, 15,000 rounds, on the
  GPU as the pipeline runs them there (one process per setting Z, k', side by side), end to
  end; every run's final test accuracy, compared per cell with the
  CPU's published at ``docs/paper-profile`` when the call ran (kept beside the results in
  ``gpu_cpu_reference.csv``, so that a later republication does not change the comparison
  a table states) by a two-sample t-test on the final accuracies
  with the run-to-run spread pooled over every cell of both devices (the tolerance: the GPU's
  arithmetic is not the CPU's, so a run there is another draw of the same training, and its
  mean must lie within the runs' spread of the CPU's, at 95 %).
* **Embeddings** (``embed``): the MNIST CNN as the pipeline trains it (2 epochs, real MNIST)
  and one epoch of the CIFAR-10 CNN on 50,000 images of random pixels of CIFAR-10's shape
  (timing only: the offline CIFAR-10 mirror does not fit the GPU machine's working tree).

    python benchmarks/gpu.py --mnist DIR [--parts table2_rounds table2_full embed]
                             [--out benchmarks/results]

Needs a CUDA GPU. Writes ``gpu.md``, ``gpu.csv`` (timings), ``gpu_table2.csv`` (every
run's final test accuracy on each device) and ``gpu_cpu_reference.csv`` (the CPU run's
per-cell accuracies, its commit and machine) to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fedclust.data.mnist import load_mnist  # noqa: E402
from fedclust.fl.training import FederatedTrainer  # noqa: E402
from fedclust.papers.kfed import applications as kfed_applications  # noqa: E402
from fedclust.papers.kfed import declare as kfed_pipeline  # noqa: E402

PARTS = ("table2_rounds", "table2_full", "embed")
#: The accelerator; ``--smoke`` on a machine without one checks this script on the CPU.
GPU = "cuda"
#: ``--smoke``: Table 2 shrunk to check the script end to end in a minute (no numbers to keep).
SMOKE = {"per_rotation": 600, "test_per_rotation": 100, "rounds": 40, "eval_every": 20,
         "ifca_restarts": 3, "ifca_restart_rounds": 5, "runs": 2}
PUBLISHED = ROOT / "docs" / "paper-profile" / "reproduction.csv"
#: The CPU run a call's GPU accuracies were compared with, beside its results.
CPU_REFERENCE = "gpu_cpu_reference.csv"
#: The CPU run's provenance, on every row of :func:`published_cpu` beside its accuracies.
CPU_PROVENANCE = ("commit", "machine", "table2_jobs")
LEVEL = 0.95


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return (f"{cpu} ({torch.get_num_threads()} torch threads); {gpu}; torch {torch.__version__}"
            f" (CUDA {torch.version.cuda}), Python {platform.python_version()}")


def paper_settings() -> tuple[dict, list]:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    return (kfed_pipeline.table2_settings(config),
            [tuple(c) for c in kfed_pipeline.table2_cells(config)])


class RoundTimer:
    """Times :meth:`FederatedTrainer.run_many` (the rounds, not the data or k-FED)."""

    def __init__(self):
        self.seconds = []
        self._run_many = FederatedTrainer.run_many
        timer = self

        def timed(trainer, jobs, **kwargs):
            if trainer.device.type == "cuda":
                torch.cuda.synchronize()
            tic = time.perf_counter()
            out = timer._run_many(trainer, jobs, **kwargs)
            if trainer.device.type == "cuda":
                torch.cuda.synchronize()
            timer.seconds.append(time.perf_counter() - tic)
            return out

        FederatedTrainer.run_many = timed


def share_kfed_fits() -> None:
    """k-FED's one-shot clustering of a run is the same numpy work on either device: fit it
    once per (run seed, settings) and hand the same fit to every later call."""
    fits = {}
    fit = kfed_applications._fit_kfed

    def shared(data, params, seed):
        key = (seed, json.dumps(params, sort_keys=True), len(data.X))
        if key not in fits:
            fits[key] = fit(data, params, seed)
        return fits[key]

    kfed_applications._fit_kfed = shared


def share_table2_data() -> None:
    """A run's rotated data are the same on either device: build them once."""
    built = {}
    make = kfed_applications._table2_data

    def shared(train, test, cfg, n_devices, device_clusters, run, base_seed):
        key = (n_devices, device_clusters, run, base_seed, cfg["per_rotation"],
               cfg["test_per_rotation"], cfg["pairing"])
        if key not in built:
            built[key] = make(train, test, cfg, n_devices, device_clusters, run, base_seed)
        return built[key]

    kfed_applications._table2_data = shared


def final_accuracy(tables: dict, device: str) -> pd.DataFrame:
    rows = []
    for (z, kp, method), table in tables.items():
        last = table[(table["metric"] == "test_accuracy")]
        last = last[last["round"] == last["round"].max()]
        rows += [{"device": device, "n_devices": z, "device_clusters": kp, "method": method,
                  "run": int(r), "test_accuracy": float(v)}
                 for r, v in zip(last["run"], last["value"], strict=True)]
    return pd.DataFrame(rows)


def table2_rounds(train, test, settings, cells, timer, phases=(0, 1),
                  devices=("cpu", "cuda")):
    """Seconds per round of both phases on the CPU and the GPU, each the slope between a
    short and a long run (so the one-off work of a run -- its starts' initial models, the
    scoring of IFCA's starts, the evaluations -- is its own row, not spread over the
    rounds); the GPU's long runs twice, to compare. Yields each phase's rows on a device as
    soon as they are measured."""
    restart = settings["ifca_restarts"]
    # one evaluation row per device: the rounds' time, not the evaluations' (the full run
    # below evaluates as the pipeline does)
    quiet = {"eval_train_rows": 1, "eval_test_rows": 1}
    phases_all = [("IFCA's random starts side by side", (3, 9),
                   lambda r: {"rounds": r, "ifca_restart_rounds": r, **quiet}),
                  ("after IFCA's starts (one start)", (20, 120),
                   lambda r: {"rounds": r, "ifca_restarts": 1, **quiet})]
    for phase, lengths, change in [phases_all[i] for i in phases]:
        for device in [GPU if d == "cuda" else d for d in devices]:
            seconds, tables = [], []
            for rounds in (*lengths, lengths[1]) if device == GPU else lengths:
                cfg = {**settings, **change(rounds), "device": device, "eval_every": rounds}
                log(f"Table 2 rounds, {phase}, {rounds} rounds, {device}")
                tables.append(kfed_applications.table2_cells(train, test, cells=cells,
                                                             cfg=cfg, base_seed=2021))
                seconds.append(timer.seconds[-1])
            per_round = (seconds[1] - seconds[0]) / (lengths[1] - lengths[0])
            once = seconds[0] - lengths[0] * per_round
            base = {"part": "table2_rounds", "device": device,
                    "runs": len(cells) * settings["runs"],
                    "restarts": change(1).get("ifca_restarts", restart)}
            rows = [{**base, "what": phase, "value": per_round, "unit": "s per round"},
                    {**base, "what": f"{phase}: once per run", "value": once, "unit": "s"}]
            log(f"  {per_round:.4f} s per round, {once:.1f} s once")
            if len(tables) == 3:
                same = all(tables[1][c].equals(tables[2][c]) for c in cells)
                log(f"  rerun with the same seed: {'identical' if same else 'DIFFERENT'}")
                rows.append({**base, "what": f"{phase}: GPU rerun identical",
                             "value": float(same), "unit": "bool"})
            yield rows


def _setting(mnist_dir: Path, cells: list, cfg: dict, threads: int):
    """One Table 2 setting's cells in a process of its own, on ``threads`` CPU threads (its
    share of the cores: torch's and numba's pools would otherwise each take all of them):
    its tables, its seconds end to end and of rounds."""
    import numba

    torch.set_num_threads(threads)
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    train, test = load_mnist(mnist_dir, "train"), load_mnist(mnist_dir, "test")
    timer = RoundTimer()
    tic = time.perf_counter()
    tables = kfed_applications.table2_cells(train, test, cells=cells, cfg=cfg, base_seed=2021)
    return tables, time.perf_counter() - tic, timer.seconds[-1]


def table2_full(mnist_dir: Path, settings, cells, out: Path) -> tuple[list[dict], pd.DataFrame]:
    """Table 2 at paper scale on the GPU as the pipeline runs it there: one process per
    setting (Z, k'), its methods and runs trained together, the processes side by side."""
    cfg = {**settings, "device": GPU}
    groups = {}
    for cell in cells:
        groups.setdefault(cell[:2], []).append(cell)
    log(f"Table 2 at paper scale on the GPU: {len(cells)} cells x {cfg['runs']} runs, "
        f"{cfg['rounds']} rounds, {len(groups)} processes")
    threads = max(1, len(os.sched_getaffinity(0)) // len(groups))
    tic = time.perf_counter()
    with ProcessPoolExecutor(len(groups), mp_context=get_context("spawn")) as pool:
        done = list(pool.map(_setting, *zip(*[(mnist_dir, group, cfg, threads)
                                               for group in groups.values()], strict=True)))
    total = time.perf_counter() - tic
    tables = {cell: table for part, _, _ in done for cell, table in part.items()}
    for (z, kp, m), table in tables.items():
        table.to_csv(out / f"gpu_table2_n{z}_k{kp}_{m}.csv", index=False)
    rows = [{"part": "table2_full", "what": f"{len(cells)} cells x {cfg['runs']} runs, "
             f"{cfg['rounds']:,} rounds, {len(groups)} processes side by side, wall",
             "device": GPU, "value": total, "unit": "s"},
            *({"part": "table2_full", "what": f"setting Z={z}, k'={kp}: end to end / rounds",
               "device": GPU, "value": seconds, "unit": "s", "rounds_s": rounds}
              for (z, kp), (_, seconds, rounds) in zip(groups, done, strict=True))]
    log(f"  {total:.1f} s wall")
    return rows, final_accuracy(tables, GPU)


def published_cpu() -> pd.DataFrame:
    """The CPU's per-cell mean and standard deviation of the final test accuracy, as the
    published paper-profile report states them (``n runs, ours ± sd``), with the report's
    ``commit``, ``machine`` (without the speed line) and ``table2_jobs`` (its Table 2 jobs'
    time) on every row."""
    table = pd.read_csv(PUBLISHED)
    table = table[table["key"] == "kfed.table2.values"]
    provenance = yaml.safe_load(PUBLISHED.with_name("provenance.yaml").read_text())
    rows = []
    names = {"Global": "global", "IFCA": "ifca", "k-FED": "kfed"}
    for _, row in table.iterrows():
        setting = row["item"]                 # "Table 2, 100 devices, k'=1"
        z = int(setting.split(",")[1].split()[0])
        kp = int(setting.split("k'=")[1])
        method = names[row["quantity"].split(", ", 1)[1]]
        n = int(row["note"].split(" runs")[0])
        sd = float(row["note"].split("ours ± ")[1].split(",")[0])
        rows.append({"n_devices": z, "device_clusters": kp, "method": method,
                     "cpu_mean": float(row["reproduced"]), "cpu_sd": sd, "cpu_runs": n,
                     "paper": float(row["paper_value"])})
    return pd.DataFrame(rows).assign(commit=str(provenance["commit"]),
                                     machine=str(provenance["machine"]).split(";")[0],
                                     table2_jobs=published_table2_jobs())


def cpu_reference(folder: Path) -> pd.DataFrame:
    """The CPU run ``folder``'s GPU accuracies were compared with (its
    :data:`CPU_REFERENCE`), else the published one (:func:`published_cpu`)."""
    path = folder / CPU_REFERENCE
    return pd.read_csv(path, dtype={"commit": str}) if path.exists() else published_cpu()


def compare(gpu: pd.DataFrame, cpu: pd.DataFrame) -> pd.DataFrame:
    """Per cell: GPU mean against the CPU mean (``cpu``, :func:`cpu_reference`), a
    two-sample t-test with the run-to-run variance pooled over every cell of both devices."""
    g = (gpu.groupby(["n_devices", "device_clusters", "method"])["test_accuracy"]
         .agg(gpu_mean="mean", gpu_sd="std", gpu_runs="count").reset_index())
    both = cpu.drop(columns=list(CPU_PROVENANCE)).merge(
        g, on=["n_devices", "device_clusters", "method"])
    dof = int(((both["cpu_runs"] - 1) + (both["gpu_runs"] - 1)).sum())
    pooled = np.sqrt((((both["cpu_runs"] - 1) * both["cpu_sd"] ** 2).sum()
                      + ((both["gpu_runs"] - 1) * both["gpu_sd"] ** 2).sum()) / dof)
    t = stats.t.ppf(0.5 + LEVEL / 2, dof)
    both["difference"] = both["gpu_mean"] - both["cpu_mean"]
    both["band"] = t * pooled * np.sqrt(1 / both["cpu_runs"] + 1 / both["gpu_runs"])
    both["within"] = both["difference"].abs() <= both["band"]
    both.attrs.update(pooled_sd=pooled, dof=dof, t=t)
    return both


def embed_part(mnist_dir: Path) -> list[dict]:
    from fedclust.embed import train_and_embed

    rows = []
    train, test = load_mnist(mnist_dir, "train"), load_mnist(mnist_dir, "test")
    for device in ("cpu", GPU):
        log(f"MNIST CNN, 2 epochs, {device}")
        tic = time.perf_counter()
        result = train_and_embed("mnist", *train, *test, train[0][:50000], train[1][:50000],
                                 epochs=2, seed=7, progress=False, device=device)
        seconds = time.perf_counter() - tic
        rows += [{"part": "embed", "what": "MNIST CNN, 2 epochs + 50,000 embedded, seconds",
                  "device": device, "value": seconds, "unit": "s"},
                 {"part": "embed", "what": "MNIST CNN, test accuracy", "device": device,
                  "value": result.test_accuracy, "unit": "fraction"}]
        log(f"  {seconds:.1f} s, test accuracy {result.test_accuracy:.4f}")
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(50000, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, 50000)
    for device in ("cpu", GPU):
        log(f"CIFAR-10 CNN, 1 epoch on random pixels, {device}")
        tic = time.perf_counter()
        train_and_embed("cifar10", images, labels, images[:1000], labels[:1000],
                        images[:1000], labels[:1000], epochs=1, seed=7, progress=False,
                        device=device)
        seconds = time.perf_counter() - tic
        rows.append({"part": "embed", "what": "CIFAR-10 CNN, 1 epoch of 50,000 images "
                     "(random pixels, augmented)", "device": device, "value": seconds,
                     "unit": "s"})
        log(f"  {seconds:.1f} s")
    return rows


def published_table2_jobs() -> str:
    """The paper profile's per-cell Table 2 jobs as the published per-rule table states them."""
    rules = PUBLISHED.with_name("rules.md").read_text().splitlines()
    row = next(line for line in rules if line.startswith("| kfed_table2 |"))
    jobs, total, _, _, cpu = (cell.strip() for cell in row.strip("|").split("|")[1:6])
    return (f"{jobs} `kfed_table2` jobs took {float(total):,.1f} s of job time "
            f"({float(cpu):,.0f} s of CPU)")


def render(timings: pd.DataFrame, comparison: pd.DataFrame | None, machine: str,
           settings: dict, reference: pd.DataFrame) -> str:
    """``gpu.md`` from the timings, the accuracies' comparison and the CPU run they are
    compared with (:func:`cpu_reference`)."""
    t = timings
    published, published_on, cpu_jobs = (str(reference[c].iloc[0]) for c in CPU_PROVENANCE)
    calls = t["call"].nunique() if "call" in t else 1
    dates = ", ".join(sorted(t["date"].dropna().unique())) if "date" in t else ""
    lines = ["# The pipeline's torch work: CPU against GPU", "",
             f"Machine: {machine}. Measured in {'one call' if calls == 1 else f'{calls} calls'}"
             f" of `benchmarks/gpu.py` ({dates or time.strftime('%Y-%m-%d')}"
             f"{'; the call column of gpu.csv says which' if calls > 1 else ''}); the CPU "
             "column uses every torch thread of the same machine.", ""]
    rounds = t[(t["part"] == "table2_rounds") & (t["unit"] != "bool")]
    if len(rounds):
        lines += ["## Table 2: every cell and run trained together", "",
                  "Seconds per round: the slope between a short and a long run of each phase; "
                  "*once per run*: the rest (initial models, scoring IFCA's starts, "
                  "evaluations).", "",
                  "| phase | runs | CPU | GPU | CPU / GPU |", "|---|---|---|---|---|"]
        for phase, group in rounds.groupby("what", sort=False):
            first = group.drop_duplicates("device").set_index("device")["value"]
            cpu, gpu = (first.get(d, float("nan")) for d in ("cpu", GPU))
            unit = group["unit"].iloc[0]
            shown = [f"{v:.4f}" if v == v else "not measured" for v in (cpu, gpu)]
            ratio = f"{cpu / gpu:.1f}x" if cpu == cpu and gpu == gpu else ""
            lines.append(f"| {phase} ({unit}) | {int(group['runs'].iloc[0])} | {shown[0]} | "
                         f"{shown[1]} | {ratio} |")
        same = t[t["unit"] == "bool"]
        lines += ["", "GPU reruns with the same seed: " + ("; ".join(
            f"{w.split(':')[0]}: {'identical' if v else 'DIFFERENT'}"
            for w, v in zip(same["what"], same["value"], strict=True)) or "not run"), ""]
        value = dict(zip(rounds["what"] + rounds["device"], rounds["value"], strict=True))
        keys = list(dict.fromkeys(rounds["what"]))
        if len(keys) == 4 and all(k + d in value for k in keys for d in ("cpu", GPU)):
            rounds, starts = settings["rounds"], settings["ifca_restart_rounds"]
            for device, name in (("cpu", "CPU"), (GPU, "GPU")):
                projected = (starts * value[keys[0] + device] + value[keys[1] + device]
                             + (rounds - starts) * value[keys[2] + device])
                lines.append(f"Projected from these times, Table 2's {rounds:,} rounds ({starts} "
                             f"with IFCA's starts, which are scored once): {name} "
                             f"{projected / 60:.1f} min, data and k-FED's clusterings aside.")
            lines.append("")
    full = t[t["part"] == "table2_full"]
    if len(full):
        lines += ["## Table 2 at paper scale on the GPU", "",
                  *(f"- {w}: {v:.1f} s ({v / 60:.1f} min)"
                    + (f" / {r:.1f} s" if r == r else "")
                    for w, v, r in zip(full["what"], full["value"],
                                       full.get("rounds_s", [float("nan")] * len(full)),
                                       strict=True)),
                  f"- the CPU, for reference: the paper profile's {cpu_jobs} "
                  f"at {published} on {published_on} "
                  "(docs/paper-profile/rules.md; another machine, so no ratio is drawn)", ""]
    if comparison is not None:
        a = comparison.attrs
        lines += ["### Final test accuracy, GPU against CPU", "",
                  "CPU: the published paper-profile run (docs/paper-profile, computed at "
                  f"{published}; the GPU's from a later commit, so a difference would "
                  "also hold any change to Table 2's code between the two). Test: two-sample "
                  f"t at {LEVEL:.0%} with the run-to-run standard deviation pooled over every "
                  f"cell of both devices ({a['pooled_sd']:.4f}, {a['dof']} degrees of "
                  f"freedom, t = {a['t']:.2f}).", "",
                  "| Z | k' | method | paper | CPU mean ± sd | GPU mean ± sd | GPU - CPU | band "
                  "| within |", "|---|---|---|---|---|---|---|---|---|"]
        for _, r in comparison.iterrows():
            lines.append(
                f"| {r.n_devices} | {r.device_clusters} | {r.method} | {r.paper:.3f} | "
                f"{r.cpu_mean:.4f} ± {r.cpu_sd:.4f} | {r.gpu_mean:.4f} ± {r.gpu_sd:.4f} | "
                f"{r.difference:+.4f} | ±{r.band:.4f} | {'yes' if r.within else 'NO'} |")
        lines += ["", f"{int(comparison['within'].sum())} of {len(comparison)} cells within "
                  "the band.", ""]
    emb = t[t["part"] == "embed"]
    if len(emb):
        lines += ["## CNN embeddings", ""]
        if emb["machine"].iloc[0] != machine:
            lines += [f"Measured in an earlier call of this script on {emb['machine'].iloc[0]} "
                      f"(the code these rows time is the same).", ""]
        lines += ["| what | CPU | GPU | CPU / GPU |", "|---|---|---|---|"]
        for what, group in emb.groupby("what", sort=False):
            cpu = group.loc[group["device"] == "cpu", "value"].iloc[0]
            gpu = group.loc[group["device"] == GPU, "value"].iloc[0]
            ratio = f"{cpu / gpu:.1f}x" if group["unit"].iloc[0] == "s" else ""
            lines.append(f"| {what} | {cpu:.4g} | {gpu:.4g} | {ratio} |")
        lines.append("")
    return "\n".join(lines)


def rerender(folder: Path) -> None:
    """``folder/gpu.md`` from the rows already measured there (no GPU needed)."""
    timings = pd.read_csv(folder / "gpu.csv")
    accuracy = folder / "gpu_table2.csv"
    reference = cpu_reference(folder)
    comparison = compare(pd.read_csv(accuracy), reference) if accuracy.exists() else None
    machines = timings["machine"].dropna().unique()
    if len(machines) != 1:
        sys.exit(f"{folder / 'gpu.csv'}: rows of {len(machines)} machines; one table is one "
                 "machine")
    global GPU
    GPU = "cuda"
    (folder / "gpu.md").write_text(render(timings, comparison, machines[0], paper_settings()[0],
                                          reference))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mnist", type=Path, help="folder of MNIST's four *-ubyte.gz files")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="what to measure, in this order (each part's rows are written "
                             "when it ends)")
    parser.add_argument("--round-phases", nargs="+", type=int, choices=(0, 1), default=(0, 1),
                        help="table2_rounds: which phases (0: IFCA's starts, 1: after them)")
    parser.add_argument("--round-devices", nargs="+", choices=("cpu", "cuda"),
                        default=("cpu", "cuda"), help="table2_rounds: on which devices")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--merge", type=Path,
                        help="an earlier call's gpu.csv: its rows of parts not run now are "
                             "kept (and said to be from that call)")
    parser.add_argument("--render", type=Path, metavar="DIR",
                        help="measure nothing: write DIR/gpu.md again from DIR/gpu.csv and "
                             "DIR/gpu_table2.csv (rows of several calls: one `call` each)")
    parser.add_argument("--smoke", action="store_true",
                        help="a shrunk Table 2 to check the script (on the CPU if no GPU)")
    args = parser.parse_args(argv)
    if args.render:
        rerender(args.render)
        return
    if args.mnist is None:
        parser.error("--mnist is required to measure")
    global GPU
    if not torch.cuda.is_available():
        if not args.smoke:
            sys.exit("benchmarks/gpu.py needs a CUDA GPU; torch sees none")
        GPU = "cpu"
    args.out.mkdir(parents=True, exist_ok=True)
    machine = machine_line()
    log(machine)
    timer = RoundTimer()
    share_kfed_fits()
    share_table2_data()
    settings, cells = paper_settings()
    if args.smoke:
        settings.update(SMOKE)
    train, test = load_mnist(args.mnist, "train"), load_mnist(args.mnist, "test")
    rows, comparison, accuracy = [], None, None
    # a new Table 2 is compared with the report published now, any other render keeps the
    # CPU run its folder's accuracies were compared with
    reference = (published_cpu() if "table2_full" in args.parts
                 else cpu_reference(args.out))
    if GPU == "cuda":        # the context and cuBLAS start outside any timing
        warm = torch.ones(4, 8, 8, device=GPU)
        torch.bmm(warm, warm).sum().item()

    call = time.strftime("%Y-%m-%dT%H:%M:%S")
    earlier = pd.DataFrame()
    if args.merge:
        earlier = pd.read_csv(args.merge)
        earlier = earlier[~earlier["part"].isin(args.parts)]

    def save():
        timings = pd.concat([pd.DataFrame(rows).assign(machine=machine, date=call[:10],
                                                       call=call), earlier],
                            ignore_index=True)
        timings.to_csv(args.out / "gpu.csv", index=False)
        if accuracy is not None:
            accuracy.to_csv(args.out / "gpu_table2.csv", index=False)
            reference.to_csv(args.out / CPU_REFERENCE, index=False)
        (args.out / "gpu.md").write_text(render(timings, comparison, machine, settings,
                                                reference))

    for part in dict.fromkeys(args.parts):          # in the order given, each saved when done
        if part == "table2_rounds":
            for measured in table2_rounds(train, test, settings, cells, timer,
                                          args.round_phases, args.round_devices):
                rows += measured
                save()
        elif part == "table2_full":
            full, accuracy = table2_full(args.mnist, settings, cells, args.out)
            rows += full
            comparison = compare(accuracy, reference)
        else:
            rows += embed_part(args.mnist)
        save()
    log("done")


if __name__ == "__main__":
    main()

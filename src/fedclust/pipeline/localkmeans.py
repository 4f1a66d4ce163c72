"""LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025): what the pipeline produces for it.

Rules that compute the tables live in ``workflow/rules/localkmeans.smk``; the figures,
gathered tables, claims and captions are declared here (see
:mod:`fedclust.pipeline.registry`).
"""

from __future__ import annotations

from .data import DATASETS
from .registry import Figure, Paper, Table

__all__ = ["PAPER", "INIT_FILE_NAMES", "FIG4_SWEEPS", "fig1_parts", "fig4_parts",
           "real_parts", "init_of_file_name"]

CITATION = "LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025)"
#: How an initialization is spelled in file names.
INIT_FILE_NAMES = {"k-means++": "kmeanspp", "perturbed": "perturbed"}
#: Figure 4's sweeps (App. B.2).
FIG4_SWEEPS = ("snr", "n_clusters", "n_machines")

_SNR_FORMULA = ("r = (Δ/σ) √(α / (1 + K d / n)) (Lu & Zhou, 2016; Δ the minimum center "
                "distance, α the smallest cluster fraction, n all samples)")


def init_of_file_name(name: str) -> str:
    """The initialization a file-name spelling stands for."""
    for init, spelled in INIT_FILE_NAMES.items():
        if spelled == name:
            return init
    raise ValueError(f"unknown initialization {name!r} in a file name; expected one of "
                     f"{sorted(INIT_FILE_NAMES.values())}")


def fig1_parts(config) -> list[str]:
    cfg = config["localkmeans"]["fig1"]
    return [f"results/localkmeans/fig1/snr{snr}_{INIT_FILE_NAMES[init]}.csv"
            for snr in cfg["snrs"] for init in cfg["inits"]]


def fig4_parts(config) -> list[str]:
    cfg = config["localkmeans"]["fig4"]
    return [f"results/localkmeans/fig4/{sweep}.csv" for sweep in FIG4_SWEEPS if cfg[sweep]]


def real_parts(config) -> list[str]:
    return [f"results/localkmeans/real/{ds}.csv"
            for ds in config["localkmeans"]["real"]["datasets"]]


def _has_real(config) -> bool:
    return bool(config["localkmeans"]["real"]["datasets"])


def _steps(values) -> str:
    return ", ".join("no aggregation" if v is None else f"L = {v}" for v in values)


def _fig1_caption(config, dataset=None) -> str:
    syn, cfg = config["localkmeans"]["synthetic"], config["localkmeans"]["fig1"]
    return (
        f"{CITATION}, Figure 1: misclustering rate against the iteration t on Gaussian "
        f"mixtures ({_steps(cfg['local_steps'])}; L = 1 is centralized Lloyd, no aggregation "
        f"dashed), mean ± std over {cfg['trials']} trials. Rows: signal-to-noise ratio "
        f"{_SNR_FORMULA}, r in {cfg['snrs']}. Columns: LocalKMeans++ (exact distributed "
        f"k-means++) and the true centers perturbed by {syn['perturbation']:g} Δ. Not in the "
        f"paper (our choice): d = {syn['n_features']}, K = {syn['n_clusters']}, M = "
        f"{syn['n_machines']} machines of {syn['samples_per_machine']} samples, T = "
        f"{syn['n_iter']}, the perturbation; the data are dealt uniformly at random over the "
        f"machines.")


def _fig4_caption(config, dataset=None) -> str:
    syn, cfg = config["localkmeans"]["synthetic"], config["localkmeans"]["fig4"]
    return (
        f"{CITATION}, Figure 4 (App. B.2): misclustering after T = {syn['n_iter']} iterations "
        f"(mean ± std over {cfg['trials']} trials) as (a) the SNR, (b) K with "
        f"{syn['samples_per_machine']} samples per machine, (c) M with "
        f"{cfg['total_samples']:,} samples in all vary (SNR {cfg['sweep_snr']:g} in (b) and "
        f"(c)); {_steps(cfg['local_steps'])} with {cfg['init']} initialization. SNR as in "
        f"Figure 1.")


def _real_datasets(config) -> str:
    return ", ".join(DATASETS[ds].title for ds in config["localkmeans"]["real"]["datasets"])


def _fig2_caption(config, dataset=None) -> str:
    cfg = config["localkmeans"]["real"]
    return (
        f"{CITATION}, Figure 2: misclustering rate against the iteration on real data "
        f"({_real_datasets(config)}), {cfg['n_machines']} machines of "
        f"{cfg['samples_per_machine']} rows each where the data set is large enough (else all "
        f"rows split evenly), {cfg['init']} initialization, mean ± std over {cfg['trials']} "
        f"trials, {_steps(cfg['local_steps'])} (no aggregation dashed). Panel titles and the "
        f"tables' data column say which files each run used: the offline mirror's Postures is "
        f"a real subset (classes 1-3 of users 0-2) and its CIFAR-10 a JPEG re-encoding (a "
        f"lossy approximation of the original images). MNIST and CIFAR-10 are clustered in the "
        f"feature space of small CNNs trained here (1,568-d and 512-d), whose test accuracies "
        f"are recorded with the embeddings.")


def _fig3_caption(config, dataset=None) -> str:
    cfg = config["localkmeans"]["real"]
    return (
        f"{CITATION}, Figure 3: k-means objective of the global model against the iteration: "
        f"the cost of all rows under the size-weighted aggregate of the machines' current "
        f"centers (the model the server would hold if it synchronized then), divided by "
        f"centralized Lloyd's final objective in the same trial (1 = centralized Lloyd), mean "
        f"± std over {cfg['trials']} trials; same runs as Figure 2. Between synchronizations "
        f"each machine's own centers fit its rows better than this global model does.")


def _claim_inputs(config) -> dict[str, str]:
    return {"real": "results/localkmeans/real.csv"} if _has_real(config) else {}


def _single(table):
    return lambda config, dataset=None: [f"results/localkmeans/{table}.csv"]


PAPER = Paper(
    key="localkmeans",
    title=CITATION,
    figures=(
        Figure("fig1_misclustering", _single("fig1"),
               "fedclust.plots.localkmeans:plot_trajectories", _fig1_caption,
               options={"metric": "misclustering", "rows": "snr", "cols": "init",
                        "ylabel": "misclustering rate",
                        "title": "LocalKMeans on Gaussian mixtures"}),
        Figure("fig4_sweeps", _single("fig4"),
               "fedclust.plots.localkmeans:plot_final_sweeps", _fig4_caption),
        Figure("fig2_misclustering_real", _single("real"),
               "fedclust.plots.localkmeans:plot_trajectories", _fig2_caption,
               enabled=_has_real,
               options={"metric": "misclustering", "cols": "dataset",
                        "ylabel": "misclustering rate", "title": "LocalKMeans on real data"}),
        Figure("fig3_objective_real", _single("real"),
               "fedclust.plots.localkmeans:plot_trajectories", _fig3_caption,
               enabled=_has_real,
               options={"metric": "objective / centralized", "cols": "dataset",
                        "ylabel": "k-means objective / centralized Lloyd's final",
                        "title": "LocalKMeans on real data: k-means objective"}),
    ),
    tables=(Table("fig1", fig1_parts), Table("fig4", fig4_parts), Table("real", real_parts)),
    claims="fedclust.reproduction:localkmeans_claims",
    claim_inputs=_claim_inputs,
)

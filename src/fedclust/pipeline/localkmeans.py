"""LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025): what the pipeline produces for it.

Rules that compute the tables live in ``workflow/rules/localkmeans.smk``; the figures,
gathered tables, claims and captions are declared here (see
:mod:`fedclust.pipeline.registry`).
"""

from __future__ import annotations

from ..vocabulary import LKM_FIG4_SWEEPS, LKM_INIT_FILE_NAMES
from .data import DATASETS
from .declarations import Figure, Paper, Table, gathered_table, stated_differences

__all__ = ["PAPER", "INIT_FILE_NAMES", "FIG4_SWEEPS", "fig1_parts", "fig4_parts",
           "real_parts", "init_of_file_name"]

CITATION = "LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025)"
#: How an initialization is spelled in file names; Figure 4's sweeps (App. B.2).
INIT_FILE_NAMES, FIG4_SWEEPS = LKM_INIT_FILE_NAMES, LKM_FIG4_SWEEPS

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
    low, high = min(cfg["snrs"]), max(cfg["snrs"])
    return (
        f"{CITATION}, Figure 1 (Sec. 4.1): misclustering rate against the iteration t on "
        f"Gaussian mixtures ({_steps(cfg['local_steps'])}; L = 1 is centralized Lloyd, no "
        f"aggregation dashed), mean ± std over {cfg['trials']} trials. Rows: signal-to-noise "
        f"ratio {_SNR_FORMULA} (reconstructed: the formula is lost in our copy), r in "
        f"{cfg['snrs']}: {low:g} is the paper's low SNR, {high:g} our high one (the paper's is "
        f"unreadable; we took the SNR at which its high-SNR statements can be seen in our "
        f"setting). Columns: LocalKMeans++ (exact distributed k-means++) and the true centers "
        f"perturbed by {syn['perturbation']:g} Δ. Not in the paper or unreadable (our choice): "
        f"d = {syn['n_features']}, K = {syn['n_clusters']}, M = {syn['n_machines']} machines of "
        f"{syn['samples_per_machine']} samples, T = {syn['n_iter']}, the perturbation; the data "
        f"are dealt uniformly at random over the machines. The checks of the paper's "
        f"statements (a)-(e) are in the reproduction report."
        + stated_differences(config, "localkmeans", "fig1"))


def _fig4_k_geometry(config) -> str:
    """What Figure 4(b) holds fixed as K varies, for its caption."""
    from ..experiments.localkmeans import separation_for_snr

    syn, cfg = config["localkmeans"]["synthetic"], config["localkmeans"]["fig4"]
    snr = cfg["sweep_snr"]
    if cfg.get("n_clusters_holds", "separation") == "snr":
        return (f"the SNR held at r = {snr:g} (so the separation Δ/σ grows with K; our "
                f"choice, not the paper's reading)")
    sep = separation_for_snr(snr, n_clusters=syn["n_clusters"], n_features=syn["n_features"],
                             n_samples=syn["n_machines"] * syn["samples_per_machine"])
    return (f"the clusters' separation held at Δ/σ = {sep:.2f} (its value at r = {snr:g} for "
            f"K = {syn['n_clusters']}; r falls as K grows), reconstructed from the paper's "
            f"reason that with more clusters 'the number of samples in one cluster is less'")


def _fig4_caption(config, dataset=None) -> str:
    syn, cfg = config["localkmeans"]["synthetic"], config["localkmeans"]["fig4"]
    return (
        f"{CITATION}, Figure 4 (App. B.2): top, misclustering against the iteration with L = 3 "
        f"and {cfg['init']} initialization (as printed), one line per swept value (mean over "
        f"{cfg['trials']} trials, the same trial seeds at every swept value): (a) the SNR "
        f"({cfg['snr']}), (b) K ({cfg['n_clusters']}) with {syn['samples_per_machine']} samples "
        f"per machine and {_fig4_k_geometry(config)}, (c) M ({cfg['n_machines']}) with "
        f"{cfg['total_samples']:,} samples in all at SNR {cfg['sweep_snr']:g} (the swept values "
        f"other than M = 10 and 20 are unreadable in our copy, ours). Bottom: "
        f"misclustering after T = {syn['n_iter']} iterations against the swept value for "
        f"{_steps(cfg['local_steps'])} (mean ± std, the L side by side so that none hides "
        f"another). SNR and the other settings as in Figure 1."
        + stated_differences(config, "localkmeans", "fig4"))


def _real_sizes(config) -> str:
    cfg = config["localkmeans"]["real"]
    parts = []
    for ds in cfg["datasets"]:
        per = cfg["samples_per_machine"].get(ds)
        parts.append(f"{DATASETS[ds].title}: "
                     + (f"{per} rows per machine" if per else "all rows split over the machines"))
    return "; ".join(parts)


def _fig2_caption(config, dataset=None) -> str:
    cfg = config["localkmeans"]["real"]
    return (
        f"{CITATION}, Figure 2 (Sec. 4.2, App. B.1): misclustering rate against the iteration "
        f"on real data, {cfg['n_machines']} machines ({_real_sizes(config)}; the paper's "
        f"Table 1: Postures 78,095 rows in 781 per machine, the embeddings 500 per machine), "
        f"{cfg['init']} initialization, mean ± std over {cfg['trials']} trials, "
        f"{_steps(cfg['local_steps'])} (no aggregation dashed). Panel titles and the tables' "
        f"data column say which files each run used: the offline mirror's Postures is a real "
        f"subset (classes 1-3 of users 0-2, 11,022 rows; the paper clusters all 5 classes), and "
        f"its CIFAR-10 a JPEG re-encoding (a lossy approximation of the original images). "
        f"Postures is clustered on its marker coordinates; the paper's d = 38 counts every CSV "
        f"column, the Class and User columns included (reconstructed; datasets.postures.columns: "
        f"all reproduces it). MNIST and CIFAR-10 are clustered in the feature space of small "
        f"CNNs trained here (1,568-d and 512-d, as the paper's Table 1), whose test accuracies "
        f"are recorded with the embeddings; the paper's CNNs are not described."
        + stated_differences(config, "localkmeans", "real"))


def _fig3_caption(config, dataset=None) -> str:
    cfg = config["localkmeans"]["real"]
    return (
        f"{CITATION}, Figure 3 (Sec. 4.2): k-means objective of the global model against the "
        f"iteration (every row to the size-weighted average of the machines' centers: the "
        f"shared centers at each aggregation; for no aggregation the average of the machines' "
        f"centers, which start from the same seeds and so correspond), divided by centralized "
        f"Lloyd's final objective in the same trial (1 = centralized Lloyd), mean ± std over "
        f"{cfg['trials']} trials; same runs as Figure 2. Dotted: no aggregation's machines' own "
        f"objective (each machine's rows to its own centers). The paper does not say which of "
        f"the two it plots; it sees 'the benefit of aggregation' in this figure on CIFAR-10, "
        f"which only the global model's objective can show (fitting each machine alone lowers "
        f"the machines' own), so the checks use that one."
        + stated_differences(config, "localkmeans", "real"))


def _claim_inputs(config) -> dict[str, str]:
    inputs = {"fig1": "results/localkmeans/fig1.csv"}
    if fig4_parts(config):
        inputs["fig4"] = "results/localkmeans/fig4.csv"
    if _has_real(config):
        inputs["real"] = "results/localkmeans/real.csv"
    return inputs


PAPER = Paper(
    key="localkmeans",
    title=CITATION,
    figures=(
        Figure("fig1_misclustering", gathered_table("localkmeans", "fig1"),
               "fedclust.plots.localkmeans:plot_trajectories", _fig1_caption,
               options={"metric": "misclustering", "rows": "snr", "cols": "init",
                        "ylabel": "misclustering rate",
                        "title": "LocalKMeans on Gaussian mixtures"}),
        Figure("fig4_sweeps", gathered_table("localkmeans", "fig4"),
               "fedclust.plots.localkmeans:plot_final_sweeps", _fig4_caption),
        Figure("fig2_misclustering_real", gathered_table("localkmeans", "real"),
               "fedclust.plots.localkmeans:plot_trajectories", _fig2_caption,
               enabled=_has_real,
               options={"metric": "misclustering", "cols": "dataset",
                        "ylabel": "misclustering rate", "title": "LocalKMeans on real data"}),
        Figure("fig3_objective_real", gathered_table("localkmeans", "real"),
               "fedclust.plots.localkmeans:plot_trajectories", _fig3_caption,
               enabled=_has_real,
               options={"metric": "objective / centralized", "cols": "dataset",
                        "objective": "global_objective", "own_objective": True,
                        "ylabel": "k-means objective (global model)\n/ centralized Lloyd's "
                                  "final",
                        "title": "LocalKMeans on real data: k-means objective"}),
    ),
    tables=(Table("fig1", fig1_parts), Table("fig4", fig4_parts), Table("real", real_parts)),
    claims="fedclust.claims.localkmeans:claims",
    claim_inputs=_claim_inputs,
)

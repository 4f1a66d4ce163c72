"""k-FED (Dennis, Li & Smith, ICML 2021): what the pipeline produces for it, declared once.

Rules that compute the tables live in ``workflow/rules/kfed.smk``; the figures, gathered
tables, claims and captions are declared here (see :mod:`fedclust.pipeline.registry`).
"""

from __future__ import annotations

from .data import DATASETS
from .registry import Figure, Paper, Table

__all__ = ["PAPER", "MIXTURE_EXPERIMENTS", "FEDERATED_EXPERIMENTS", "mixture_parts",
           "federated_parts", "oracle_ks", "oracle_inputs", "table1_caption",
           "chosen_k_caption"]

CITATION = "k-FED (Dennis, Li & Smith, ICML 2021)"
#: Gaussian-mixture experiments, one part table per (d, k) setting.
MIXTURE_EXPERIMENTS = ("table1", "fig1")
#: Experiments on real federated data, one part table per data set (per k for fig3).
FEDERATED_EXPERIMENTS = ("fig2", "fig3", "participation", "new_devices", "heterogeneity")


def mixture_parts(experiment: str, config) -> list[str]:
    """Per-(d, k) part tables of a Gaussian-mixture experiment."""
    return [f"results/kfed/{experiment}/d{s['n_features']}_k{s['n_clusters']}.csv"
            for s in config["kfed"][experiment]["settings"]]


def federated_parts(experiment: str, config) -> list[str]:
    """Per-data-set (per-k for fig3) part tables of a federated experiment."""
    cfg = config["kfed"][experiment]
    if experiment == "fig3":
        return [f"results/kfed/fig3/{ds}_k{k}.csv" for ds in cfg["datasets"]
                for k in cfg["n_clusters"]]
    return [f"results/kfed/{experiment}/{ds}.csv" for ds in cfg["datasets"]]


def oracle_ks(experiment: str, dataset: str, config) -> list[int]:
    """The oracle k an experiment may use on a data set: the whole separation grid when k is
    ``chosen`` (the choice is made by the separation analysis), else the configured k."""
    n_clusters = config["kfed"][experiment]["n_clusters"]
    if n_clusters == "chosen":
        sep = config["kfed"]["separation"]
        if dataset not in sep["datasets"]:
            raise ValueError(f"kfed.{experiment}.n_clusters: 'chosen' needs {dataset} in "
                             f"kfed.separation.datasets (it has {sep['datasets']})")
        return list(sep["k_grid"])
    return [int(n_clusters)]


def oracle_inputs(experiment: str, dataset: str, config, *, k=None) -> dict:
    """Input files of a federated experiment's rule besides the features: the oracle
    clusterings it may use (``oracles``) and, for ``n_clusters: chosen``, the chosen-k table
    (``chosen``). Fig 3 runs one rule per ``k``."""
    ks = [int(k)] if k is not None else oracle_ks(experiment, dataset, config)
    files = {"oracles": [f"results/kfed/oracle/{dataset}/k{kk}.h5" for kk in ks]}
    if k is None and config["kfed"][experiment]["n_clusters"] == "chosen":
        files["chosen"] = f"results/kfed/separation/{dataset}/chosen_k.csv"
    return files


def _separation_datasets(config) -> list[str]:
    return list(config["kfed"]["separation"]["datasets"])


def _has_datasets(experiment):
    return lambda config: bool(config["kfed"][experiment]["datasets"])


def _runs(config, experiment) -> int:
    return config["kfed"][experiment]["runs"]


# ------------------------------------------------------------------------------ captions
def table1_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["table1"]
    return (
        f"{CITATION}, Table 1 (Sec. 4.1): accuracy (mean ± std over {cfg['runs']} runs) of the "
        f"induced clustering on mixtures of k spherical Gaussians in d dimensions with "
        f"separation c = {cfg['separation']:g}. Each group of k' = "
        f"{'√k' if cfg['device_clusters'] == 'sqrt' else cfg['device_clusters']} clusters is "
        f"dealt evenly over m0 = {cfg['devices_per_cluster']} devices. The separation c is the "
        f"minimum over cluster pairs of c_rs = ‖μ_r − μ_s‖ / (m0 (Δ_r + Δ_s)), "
        f"Δ_r = √k' ‖A − C‖₂ / √n_r, measured on each generated sample. Not in the paper (our "
        f"choice): {cfg['samples_per_cluster']} points per cluster, unit-variance noise, "
        f"Gaussian center directions. The paper column's provenance is stated below the table.")


def chosen_k_caption(config, dataset=None) -> str:
    sep = config["kfed"]["separation"]
    return (
        f"The number of oracle clusters chosen for the later k-FED experiments on this data "
        f"set: the k of the grid {sep['k_grid']} with the largest share of cluster pairs whose "
        f"separation c_rs exceeds c0 = {sep['threshold']:g} (the larger k on ties), with the "
        f"share and the quantiles of c_rs at that k.")


def _fig1_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["fig1"]
    return (
        f"{CITATION}, Figure 1: accuracy of k-FED's induced clustering against the separation c "
        f"(log scale), mean ± std over {cfg['runs']} runs, for several (d, k) with k' = "
        f"{'√k' if cfg['device_clusters'] == 'sqrt' else cfg['device_clusters']} and m0 = "
        f"{cfg['devices_per_cluster']}. c is the minimum pairwise c_rs = ‖μ_r − μ_s‖ / "
        f"(m0 (Δ_r + Δ_s)), Δ_r = √k' ‖A − C‖₂ / √n_r, measured on each sample. Not in the "
        f"paper (our choice): {cfg['samples_per_cluster']} points per cluster, unit-variance "
        f"noise, the grid of c {cfg['separations']}. Accuracy stays at 1 well below c = 1 and "
        f"collapses once the local spectral step fails to separate the clusters on a device; "
        f"the server's farthest-point seeding then picks outlying local centers.")


def _fig5_caption(config, dataset) -> str:
    sep = config["kfed"]["separation"]
    return (
        f"{CITATION}, Figure 5 / Appendix B.2: separation of {DATASETS[dataset].title} under "
        f"its oracle clustering (k-means on all of it, k-means++ seeding, best of "
        f"{sep['oracle_n_init']} restarts). Left: distribution of c_rs over all pairs of oracle "
        f"clusters for each k of {sep['k_grid']}; the dashed line is c0 = {sep['threshold']:g}. "
        f"Right: share of pairs with c_rs > c0; the circled k (largest share, the larger k on "
        f"ties) is written to results/kfed/separation/{dataset}/chosen_k.csv for the later "
        f"experiments. Not in the paper (our choice): k' = {sep['device_clusters']} and m0 = "
        f"{sep['devices_per_cluster']} in c_rs, i.e. the separation of the data set itself "
        f"before any federation.")


def _fig2_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["fig2"]
    return (
        f"{CITATION}, Figure 2: k-FED on structured partitions (every device holds data of at "
        f"most k' oracle clusters: groups of k' oracle clusters dealt over m0 = "
        f"{cfg['devices_per_group']} devices each) and on IID partitions over the same number "
        f"of devices Z, for k' in {cfg['device_clusters']} (values above the oracle k left "
        f"out). Top: (φ(k') − φ*) / (φ̃(k') − φ*), with φ the k-means cost of k-FED's centers "
        f"on the structured partition, φ̃ on the IID one and φ* the oracle's (k-means on all "
        f"the data, k = {cfg['n_clusters']}); below 1 (dashed), the heterogeneity helped. "
        f"Bottom: both costs over φ*. Mean ± std over {cfg['runs']} seeds; a point holding "
        f"fewer runs (skipped settings) is labelled with its count. Not in the paper (our "
        f"choice): m0, the representations (FEMNIST raw pixels; Shakespeare √ character "
        f"frequencies of 80-character windows), Shakespeare's role sampling and per-role cap. "
        f"The tables' data column says which data every number was computed on.")


def _fig3_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["fig3"]
    return (
        f"{CITATION}, Figure 3: k-FED (one round) against naive distributed k-means (Lloyd "
        f"with exact distributed k-means++ seeding, one round per iteration, at most "
        f"{cfg['max_iter']} iterations) on the same {cfg['partition']} partitions, for oracle "
        f"k in {cfg['n_clusters']} and k' in {cfg['device_clusters']}. Top: k-means cost over "
        f"the oracle's φ* (mean ± std over {cfg['runs']} seeds). Bottom: floats sent up and "
        f"down (log scale; cluster counts are integers and not counted as floats); the numbers "
        f"on the bars are communication rounds (seeding rounds included for the naive "
        f"baseline).")


def _participation_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["participation"]
    return (
        f"Beyond the k-FED paper (a): k-FED when only a fraction of the devices ("
        f"max(⌊p Z⌋, 1) of Z, p in {cfg['fractions']}) sends its local centers. The failed "
        f"devices' points are still clustered afterwards through their local centers and the "
        f"global centers (Theorem 3.2). Accuracy against the oracle clustering and k-means cost "
        f"over φ*, mean ± std over {cfg['runs']} seeds; structured partitions with k' = "
        f"{cfg['device_clusters']} clusters per device and m0 = {cfg['devices_per_group']}.")


def _new_devices_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["new_devices"]
    return (
        f"Beyond the k-FED paper (b): a fraction ({cfg['held_out']}) of the devices joins only "
        f"after the fit. Their points are clustered through KFed.predict with their device ids "
        f"(each late device runs Algorithm 1 locally and takes the nearest global centers, "
        f"Theorem 3.2: no new round), against refitting k-FED with every device. Scores on "
        f"the late devices' points only, mean ± std over {cfg['runs']} seeds.")


def _heterogeneity_caption(config, dataset=None) -> str:
    cfg = config["kfed"]["heterogeneity"]
    return (
        f"Beyond the k-FED paper (c): k-FED (k' = {cfg['device_clusters']}) on the natural "
        f"partition (FEMNIST writers, Shakespeare roles) and on partitions where a fraction "
        f"{cfg['mix_fractions']} of the rows is moved to random devices (1 = IID). Left: "
        f"k-means cost of k-FED's centers over φ*. Right: heterogeneity, as the mean number of "
        f"oracle clusters per device holding more than 5% of its rows. Mean ± std over "
        f"{cfg['runs']} seeds.")


def _claim_inputs(config) -> dict[str, str]:
    cfg = config["kfed"]
    inputs = {"table1": "results/kfed/table1.csv"}
    for ds in _separation_datasets(config):
        inputs[f"separation/{ds}"] = f"results/kfed/separation/{ds}/summary.csv"
    for experiment in ("fig2", "fig3"):
        if cfg[experiment]["datasets"]:
            inputs[experiment] = f"results/kfed/{experiment}.csv"
    return inputs


def _extra_targets(config) -> list[str]:
    return ["results/kfed/table1.md"] + [f"results/kfed/separation/{ds}/chosen_k.csv"
                                         for ds in _separation_datasets(config)]


def _single(table):
    return lambda config, dataset=None: [f"results/kfed/{table}.csv"]


PAPER = Paper(
    key="kfed",
    title=CITATION,
    figures=(
        Figure("fig1_accuracy_vs_separation", _single("fig1"),
               "fedclust.plots.kfed:plot_accuracy_vs_separation", _fig1_caption),
        Figure("fig5_separation_{dataset}",
               lambda config, ds: [f"results/kfed/separation/{ds}/pairs.csv",
                                   f"results/kfed/separation/{ds}/summary.csv"],
               "fedclust.plots.kfed:plot_separation_distribution", _fig5_caption,
               datasets=_separation_datasets),
        Figure("fig2_structured_vs_iid", _single("fig2"),
               "fedclust.plots.kfed:plot_structured_vs_iid", _fig2_caption,
               enabled=_has_datasets("fig2")),
        Figure("fig3_kfed_vs_distributed_lloyd", _single("fig3"),
               "fedclust.plots.kfed:plot_kfed_vs_distributed_lloyd", _fig3_caption,
               enabled=_has_datasets("fig3")),
        Figure("participation", _single("participation"),
               "fedclust.plots.kfed:plot_participation", _participation_caption,
               enabled=_has_datasets("participation")),
        Figure("new_devices", _single("new_devices"),
               "fedclust.plots.kfed:plot_new_devices", _new_devices_caption,
               enabled=_has_datasets("new_devices")),
        Figure("heterogeneity", _single("heterogeneity"),
               "fedclust.plots.kfed:plot_heterogeneity", _heterogeneity_caption,
               enabled=_has_datasets("heterogeneity")),
    ),
    tables=tuple(Table(e, lambda config, e=e: mixture_parts(e, config))
                 for e in MIXTURE_EXPERIMENTS)
    + tuple(Table(e, lambda config, e=e: federated_parts(e, config))
            for e in FEDERATED_EXPERIMENTS),
    claims="fedclust.reproduction:kfed_claims",
    claim_inputs=_claim_inputs,
    extra_targets=_extra_targets,
)

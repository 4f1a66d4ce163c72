"""Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013): what the pipeline produces.

Rules that compute the tables live in ``workflow/rules/coreset.smk``; the figures, gathered
tables, claims and captions are declared here (see :mod:`fedclust.pipeline.registry`).

Tables: ``results/coreset/<objective>/<data set>/baseline/run<r>.csv`` (Lloyd on the global
data, one file and one job per run),
``results/coreset/<objective>/<data set>/n<sites>/<partition>.csv`` (every run of one
partition on every graph of its panel) and ``results/coreset/diameter/<data set>/side<s>.csv``
(the grid sweep);
the gathered ``graphs.csv`` (k-means, Figs 2-3), ``kmedian.csv`` and ``diameter.csv``.
"""

from __future__ import annotations

from .data import SYNTHETIC, title_of
from .declarations import Figure, Paper, Table, stated_differences

__all__ = ["PAPER", "CITATION", "GRAPHS", "setting_parts", "panel_graphs", "baseline_parts",
           "diameter_parts", "job_settings", "features_input"]

#: The paper's three communication graphs (Sec. 5), as config and file names.
GRAPHS = ("erdos_renyi", "grid", "preferential_attachment")
CITATION = "Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013)"
_OBJECTIVE_TITLES = {"kmeans": "k-means", "kmedian": "k-median"}


def _section(config) -> dict:
    return config["coreset"]


def setting_parts(config, objective: str = "kmeans", dataset: str | None = None) -> list[str]:
    """The per-partition tables of Figs 2-3 (k-means) or of the k-median panel, each holding
    every graph of the panel (:func:`fedclust.experiments.coreset.setting_runs`)."""
    cfg = _section(config)
    spec = cfg if objective == "kmeans" else cfg["kmedian"]
    datasets = spec["datasets"] if dataset is None else [dataset]
    return [f"results/coreset/{objective}/{ds}/n{cfg['n_sites']}/{partition}.csv"
            for ds in datasets for partition in spec["partitions"]]


def panel_graphs(config, objective: str) -> list[str]:
    """The graphs a partition's job runs: the k-means grid's or the k-median panel's."""
    cfg = _section(config)
    return list((cfg if objective == "kmeans" else cfg["kmedian"])["graphs"])


def diameter_parts(config, dataset: str | None = None) -> list[str]:
    spec = _section(config)["diameter"]
    datasets = spec["datasets"] if dataset is None else [dataset]
    return [f"results/coreset/diameter/{ds}/side{side}.csv" for ds in datasets
            for side in spec["sides"]]


#: Keys of the section that say which jobs exist, not what a job computes.
_JOB_LISTS = ("enabled", "datasets", "graphs", "partitions", "kmedian", "diameter")


def job_settings(config, dataset: str, objective: str = "kmeans", *,
                 diameter: bool = False) -> dict:
    """The ``coreset`` section as one job on ``dataset`` sees it: the knobs it computes with,
    not the lists of data sets, graphs and partitions (adding one reruns no other job) nor
    the other data sets' k. The k-median panel overrides the runs; a diameter job gets the
    sweep's partition, sizes and runs."""
    section = _section(config)
    cfg = {key: value for key, value in section.items() if key not in _JOB_LISTS}
    cfg["n_clusters"] = {ds: k for ds, k in section["n_clusters"].items() if ds == dataset}
    if objective == "kmedian":
        cfg["runs"] = section["kmedian"]["runs"]
    if diameter:
        cfg["diameter"] = {key: value for key, value in section["diameter"].items()
                           if key not in ("datasets", "sides")}
    return cfg


def features_input(wildcards) -> list[str]:
    """A job's data: a real data set's prepared features (``wildcards.cdata``); nothing for
    one drawn in the job (:data:`fedclust.pipeline.data.SYNTHETIC`)."""
    if wildcards.cdata in SYNTHETIC:
        return []
    return [f"data/{wildcards.cdata}/features.h5"]


def baseline_parts(config, objective: str, dataset: str, *, diameter: bool = False) -> list[str]:
    """The baseline runs a job of ``objective`` on ``dataset`` divides by, one file per run
    (one job per run: a target that needs 2 runs computes 2, and the runs spread over the
    cores): the k-means grid's ``runs``, the k-median panel's, or the diameter sweep's."""
    cfg = _section(config)
    runs = (cfg["diameter"]["runs"] if diameter else
            cfg["kmedian"]["runs"] if objective == "kmedian" else cfg["runs"])
    return [f"results/coreset/{objective}/{dataset}/baseline/run{run}.csv"
            for run in range(runs)]


def _datasets(config) -> list[str]:
    return list(_section(config)["datasets"])


def _kmedian_datasets(config) -> list[str]:
    return list(_section(config)["kmedian"]["datasets"])


def _diameter_enabled(config) -> bool:
    return bool(_section(config)["diameter"]["datasets"])


def _common(config) -> str:
    cfg = _section(config)
    theory = cfg["theory"]
    ks = ", ".join(f"{ds} k = {k}" for ds, k in cfg["n_clusters"].items()
                   if ds in {*cfg["datasets"], *cfg["kmedian"]["datasets"],
                             *cfg["diameter"]["datasets"]})
    return (
        f" {cfg['n_sites']} sites (as printed, Sec. 5). Each point of a curve is the mean over "
        f"{cfg['runs']} runs (30 in the paper) of the cost of the solution found on the coreset "
        f"divided by the cost of Lloyd's algorithm on the global data in the same run, both on "
        f"the global data (bars: one standard deviation); communication is the mean number of "
        f"points transmitted, each counted once per edge it crosses (the paper's measure), "
        f"the {cfg['n_sites']} local costs (scalars) left out of the points and counted in the "
        f"bytes. Solver on the coreset and on the global data (the paper runs Lloyd and says no "
        f"more): weighted k-means++ and Lloyd, best of {cfg['n_init']}, at most "
        f"{cfg['max_iter']} iterations (not in the paper); local solutions: k-means++ and "
        f"{cfg['local_max_iter']} Lloyd iterations (not in the paper); negative center weights "
        f"kept. Graphs: Erdős-Rényi p = {cfg['erdos_renyi_p']:g} resampled until connected, a "
        f"square grid (its shape is not printed), preferential attachment with "
        f"{cfg['attachment_links']} links per new site (not in the paper); spanning trees by "
        f"breadth-first search from a uniformly random root. Partitions: every point to a site "
        f"with probability proportional to the site's weight: equal (uniform), a Gaussian "
        f"kernel to a random anchor point with the median-heuristic width (similarity; the "
        f"paper names no similarity), |N(0,1)| (weighted), the degree (degree). Sampling "
        f"weights M_i / (t_i m_q): the proof's unbiased weight (Lemma 2), not the algorithm "
        f"box's. k per data set (ours, the paper's k = 50 for YearPredictionMSD): {ks}. "
        f"Theoretical size (Theorem 1) with the O() constant {theory['constant']:g}, "
        f"epsilon = {theory['epsilon']:g}, delta = {theory['delta']:g}.")


def _x_label(x: str) -> str:
    return "bytes on the wire" if x == "bytes" else "points transmitted"


def _fig2_caption(config, dataset=None, *, x="points_transmitted") -> str:
    cfg = _section(config)
    return (
        f"{CITATION}, Figure 2 (Sec. 5): k-means cost (normalized by Lloyd on the global data) "
        f"against communication ({_x_label(x)}) over graphs, the distributed coreset "
        f"(Algorithm 1, portions flooded by Algorithm 3) against COMBINE (a coreset of t/n "
        f"points per site, flooded the same way) at the same coreset sizes t = "
        f"{cfg['coreset_sizes']}; rows: graphs, columns: partitions. Data: "
        f"{title_of(dataset)} (the paper's YearPredictionMSD is not in the offline mirror)."
        + _common(config) + stated_differences(config, "coreset", "graphs"))


def _fig3_caption(config, dataset=None, *, x="points_transmitted") -> str:
    cfg = _section(config)
    return (
        f"{CITATION}, Figure 3 (Sec. 5): the same over the breadth-first spanning trees of the "
        f"graphs ({_x_label(x)}): the distributed coreset with its portions sent to the root "
        f"(each crossing depth(i) edges, Theorem 3; t = {cfg['coreset_sizes']}) against "
        f"Zhang et al. (every site builds a coreset of t/n points of its own data and its "
        f"children's coresets and sends it to its parent; t = {cfg['zhang_coreset_sizes']}, "
        f"larger so that the communication ranges overlap). Data: {title_of(dataset)}."
        + _common(config) + stated_differences(config, "coreset", "trees"))


def _kmedian_caption(config, dataset=None) -> str:
    spec = _section(config)["kmedian"]
    return (
        f"Beyond the paper ({CITATION} has no k-median experiment): the k-median cost ratio "
        f"against communication over graphs, the distributed coreset against COMBINE, "
        f"{spec['runs']} runs per point. k-median throughout: local solutions by D^1 seeding and "
        f"Lloyd-style k-median (Weiszfeld steps toward each cluster's geometric median), "
        f"sampling probabilities m_p = d(p, B_i) (the distance, Sec. 3), the same solver on the "
        f"coreset and on the global data. Data: {title_of(dataset)}." + _common(config))


def _diameter_caption(config, dataset=None) -> str:
    spec = _section(config)["diameter"]
    return (
        f"Beyond the paper: what the graph's diameter costs ({CITATION}, Sec. 4: 'grid networks "
        f"have a large diameter'; Zhang et al.'s coreset must grow with the tree's height). "
        f"Square grids of side {spec['sides']} ({spec['partition']} partition, {spec['runs']} "
        f"runs, data {', '.join(spec['datasets'])}); left: cost ratio, right: points "
        f"transmitted, against the grid's diameter, at one coreset size (t = "
        f"{spec['coreset_size']} for the distributed coreset and COMBINE, "
        f"{spec['zhang_coreset_size']} for Zhang et al.)." + _common(config))


def _claim_inputs(config) -> dict[str, str]:
    inputs = {}
    if _datasets(config):
        inputs["graphs"] = "results/coreset/graphs.csv"
    if _diameter_enabled(config):
        inputs["diameter"] = "results/coreset/diameter.csv"
    return inputs


def _setting_inputs(objective):
    return lambda config, ds: setting_parts(config, objective, ds)


PAPER = Paper(
    key="coreset",
    title=CITATION,
    figures=(
        Figure("fig2_{dataset}", _setting_inputs("kmeans"),
               "fedclust.plots.coreset:plot_cost_vs_communication", _fig2_caption,
               datasets=_datasets,
               options={"network": "graph", "algorithms": ("distributed", "combine")}),
        Figure("fig3_{dataset}", _setting_inputs("kmeans"),
               "fedclust.plots.coreset:plot_cost_vs_communication", _fig3_caption,
               datasets=_datasets,
               options={"network": "tree", "algorithms": ("distributed", "zhang")}),
        Figure("fig2_bytes_{dataset}", _setting_inputs("kmeans"),
               "fedclust.plots.coreset:plot_cost_vs_communication",
               lambda config, ds: _fig2_caption(config, ds, x="bytes"), datasets=_datasets,
               options={"network": "graph", "algorithms": ("distributed", "combine"),
                        "x": "bytes"}),
        Figure("fig3_bytes_{dataset}", _setting_inputs("kmeans"),
               "fedclust.plots.coreset:plot_cost_vs_communication",
               lambda config, ds: _fig3_caption(config, ds, x="bytes"), datasets=_datasets,
               options={"network": "tree", "algorithms": ("distributed", "zhang"),
                        "x": "bytes"}),
        Figure("kmedian_{dataset}", _setting_inputs("kmedian"),
               "fedclust.plots.coreset:plot_cost_vs_communication", _kmedian_caption,
               datasets=_kmedian_datasets,
               options={"network": "graph", "algorithms": ("distributed", "combine")}),
        Figure("diameter", diameter_parts, "fedclust.plots.coreset:plot_diameter",
               _diameter_caption, enabled=_diameter_enabled),
    ),
    tables=(Table("graphs", lambda config: setting_parts(config, "kmeans")),
            Table("kmedian", lambda config: setting_parts(config, "kmedian")),
            Table("diameter", diameter_parts)),
    claims="fedclust.claims.coreset:claims",
    claim_inputs=_claim_inputs,
)

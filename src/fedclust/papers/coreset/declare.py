"""Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013): what the pipeline produces. Its
figures, gathered tables (``graphs`` for the k-means Figs 2-3, ``kmedian``, ``diameter``) and
claims are declared here (:mod:`fedclust.pipeline.registry` reads them), with the paths of the
tables its jobs write (:func:`setting_parts`, :func:`baseline_parts`, :func:`diameter_parts`);
the rules that compute them are in ``rules.smk`` beside this file, its captions' templates in
``captions/``.
"""

from __future__ import annotations

from ...pipeline.declarations import Figure, Paper, Table, differences_context
from ...vocabulary import SYNTHETIC

__all__ = ["PAPER", "CITATION", "setting_parts", "run_chunks", "panel_graphs",
           "baseline_parts", "diameter_parts", "job_settings", "features_input"]

#: The paper's three communication graphs (Sec. 5), as config and file names.
CITATION = "Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013)"


def _section(config) -> dict:
    return config["coreset"]


def run_chunks(runs: int, per_job: int) -> list[tuple[int, int]]:
    """Runs ``0..runs-1`` in consecutive chunks of at most ``per_job``: ``(first, last)``."""
    return [(first, min(first + per_job, runs) - 1) for first in range(0, runs, per_job)]


def setting_parts(config, objective: str = "kmeans", dataset: str | None = None) -> list[str]:
    """The tables of Figs 2-3 (k-means) or of the k-median panel: per partition, one per
    chunk of ``runs_per_job`` runs (so that a partition's runs spread over the cores), each
    holding every graph of the panel
    (:func:`fedclust.papers.coreset.experiments.setting_runs`), in run order: concatenated, the rows
    of one job computing every run."""
    cfg = _section(config)
    spec = cfg if objective == "kmeans" else cfg["kmedian"]
    datasets = spec["datasets"] if dataset is None else [dataset]
    chunks = run_chunks(spec["runs"], cfg["runs_per_job"])
    return [f"results/coreset/{objective}/{ds}/n{cfg['n_sites']}/{partition}/"
            f"runs{first}-{last}.csv"
            for ds in datasets for partition in spec["partitions"] for first, last in chunks]


def panel_graphs(config, objective: str) -> list[str]:
    """The graphs a partition's job runs: the k-means grid's or the k-median panel's."""
    cfg = _section(config)
    return list((cfg if objective == "kmeans" else cfg["kmedian"])["graphs"])


def diameter_parts(config, dataset: str | None = None) -> list[str]:
    """The tables of the grid-diameter sweep: one per data set and grid side."""
    spec = _section(config)["diameter"]
    datasets = spec["datasets"] if dataset is None else [dataset]
    return [f"results/coreset/diameter/{ds}/side{side}.csv" for ds in datasets
            for side in spec["sides"]]


#: Keys of the section that say which jobs exist, not what a job computes.
_JOB_LISTS = ("enabled", "datasets", "graphs", "partitions", "kmedian", "diameter",
              "runs_per_job")


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


def baseline_parts(config, objective: str, dataset: str, *, diameter: bool = False,
                   runs=None) -> list[str]:
    """The baseline runs (Lloyd on the global data) a job of ``objective`` on ``dataset``
    divides by, one file per run (one job per run: a target that needs 2 runs computes 2, and
    the runs spread over the cores): ``runs`` (run indices, a setting job's chunk), else every
    run of the k-means grid, the k-median panel or the diameter sweep."""
    cfg = _section(config)
    if runs is None:
        runs = range(cfg["diameter"]["runs"] if diameter else
                     cfg["kmedian"]["runs"] if objective == "kmedian" else cfg["runs"])
    return [f"results/coreset/{objective}/{dataset}/baseline/run{run}.csv" for run in runs]


def _datasets(config) -> list[str]:
    return list(_section(config)["datasets"])


def _kmedian_datasets(config) -> list[str]:
    return list(_section(config)["kmedian"]["datasets"])


def _diameter_enabled(config) -> bool:
    return bool(_section(config)["diameter"]["datasets"])


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
        # the captions say what the plot's options draw (x: the communication axis)
        Figure("fig2_{dataset}", _setting_inputs("kmeans"), "coreset/fig2_dataset.rst",
               caption_context=differences_context("coreset", "graphs"), datasets=_datasets,
               options={"network": "graph", "algorithms": ("distributed", "combine")}),
        Figure("fig3_{dataset}", _setting_inputs("kmeans"), "coreset/fig3_dataset.rst",
               caption_context=differences_context("coreset", "trees"), datasets=_datasets,
               options={"network": "tree", "algorithms": ("distributed", "zhang")}),
        Figure("fig2_bytes_{dataset}", _setting_inputs("kmeans"), "coreset/fig2_dataset.rst",
               caption_context=differences_context("coreset", "graphs"), datasets=_datasets,
               options={"network": "graph", "algorithms": ("distributed", "combine"),
                        "x": "bytes"}),
        Figure("fig3_bytes_{dataset}", _setting_inputs("kmeans"), "coreset/fig3_dataset.rst",
               caption_context=differences_context("coreset", "trees"), datasets=_datasets,
               options={"network": "tree", "algorithms": ("distributed", "zhang"),
                        "x": "bytes"}),
        Figure("kmedian_{dataset}", _setting_inputs("kmedian"),
               "coreset/kmedian_dataset.rst", datasets=_kmedian_datasets,
               options={"network": "graph", "algorithms": ("distributed", "combine")}),
        Figure("diameter", diameter_parts, "coreset/diameter.rst", enabled=_diameter_enabled),
    ),
    tables=(Table("graphs", lambda config: setting_parts(config, "kmeans")),
            Table("kmedian", lambda config: setting_parts(config, "kmedian")),
            Table("diameter", diameter_parts)),
    claim_inputs=_claim_inputs,
)

"""The cross-paper comparison (not in any paper): what the pipeline produces.

The rules that compute its tables are in ``rules.smk`` beside this file, its captions'
templates in ``captions/``; its figures, gathered tables and claims are declared here
(:mod:`fedclust.pipeline.registry` reads them).

Tables: ``results/comparison/settings/<data set>_<partition>.csv`` (every algorithm on one
partition of one data set, every dropout fraction and run; gathered in ``table.csv``) and
``results/comparison/heterogeneity/<data set>.csv`` (the sweep from the natural partition to
IID; gathered in ``heterogeneity.csv``).
"""

from __future__ import annotations

from ...partitions import COMPARISON_PARTITIONS
from ...pipeline.data import DATASETS, MIXTURE
from ...pipeline.declarations import Figure, Paper, Table, gathered_table

__all__ = ["PAPER", "CITATION", "setting_part", "heterogeneity_part", "settings",
           "natural_datasets", "features", "job_settings", "DATASET_PATTERN",
           "PARTITION_PATTERN"]

CITATION = "Cross-paper comparison (this pipeline; not in any paper)"
#: What the ``{dataset}`` of the comparison's file names may be.
DATASET_PATTERN = "|".join([MIXTURE, *DATASETS])
#: What the ``{partition}`` of a setting's file name may be: the partitions the comparison
#: knows (:data:`fedclust.partitions.COMPARISON_PARTITIONS`, named once there)
PARTITION_PATTERN = "|".join(COMPARISON_PARTITIONS)


def _section(config) -> dict:
    return config["comparison"]


def setting_part(dataset: str, partition: str) -> str:
    return f"results/comparison/settings/{dataset}_{partition}.csv"


def heterogeneity_part(dataset: str) -> str:
    return f"results/comparison/heterogeneity/{dataset}.csv"


def _has_natural(dataset: str) -> bool:
    return dataset in DATASETS and DATASETS[dataset].natural_devices is not None


def settings(config) -> list[tuple[str, str]]:
    """Every (data set, partition) the config asks for; ``natural`` only where the data set
    has natural devices."""
    cfg = _section(config)
    return [(ds, part) for ds in cfg["datasets"] for part in cfg["partitions"]
            if part != "natural" or _has_natural(ds)]


def natural_datasets(config) -> list[str]:
    """The data sets of the heterogeneity sweep: those with natural devices."""
    return [ds for ds in _section(config)["datasets"] if _has_natural(ds)]


def features(dataset: str) -> list[str]:
    """The prepared features a job reads (none for the mixture, drawn in the job)."""
    return [] if dataset == MIXTURE else [f"data/{dataset}/features.h5"]


def job_settings(config, dataset: str, *, heterogeneity: bool = False) -> dict:
    """What one job needs: the section with ``n_clusters`` this data set's ``k`` and without
    the other jobs' lists, so that adding a data set or partition reruns no other job."""
    cfg = _section(config)
    skip = {"enabled", "datasets", "partitions"} | (set() if heterogeneity else
                                                    {"mix_fractions"})
    out = {key: value for key, value in cfg.items() if key not in skip}
    out["n_clusters"] = cfg["n_clusters"][dataset]
    if dataset != MIXTURE:
        out.pop("mixture", None)
    return out


def _caption_context(config, dataset=None) -> dict:
    """Which of the comparison's data sets is the Gaussian mixture (its captions name it so)."""
    return {"mixture": MIXTURE}


def _claim_inputs(config) -> dict:
    out = {"table": "results/comparison/table.csv"}
    if natural_datasets(config):
        out["heterogeneity"] = "results/comparison/heterogeneity.csv"
    return out


PAPER = Paper(
    key="comparison",
    title=CITATION,
    figures=(
        # the pareto captions say what the plot's option x draws
        Figure("pareto_bytes", gathered_table("comparison", "table"), "comparison/pareto.rst",
               caption_context=_caption_context, options={"x": "bytes"}),
        Figure("pareto_rounds", gathered_table("comparison", "table"), "comparison/pareto.rst",
               caption_context=_caption_context, options={"x": "rounds"}),
        Figure("dropout", gathered_table("comparison", "table"), "comparison/dropout.rst",
               caption_context=_caption_context,
               enabled=lambda config: len(_section(config)["dropout"]) > 1),
        Figure("heterogeneity", gathered_table("comparison", "heterogeneity"),
               "comparison/heterogeneity.rst", caption_context=_caption_context,
               enabled=lambda config: bool(natural_datasets(config))),
    ),
    tables=(Table("table", lambda config: [setting_part(ds, p) for ds, p in settings(config)]),
            Table("heterogeneity", lambda config: [heterogeneity_part(ds)
                                                   for ds in natural_datasets(config)])),
    claim_inputs=_claim_inputs,
)

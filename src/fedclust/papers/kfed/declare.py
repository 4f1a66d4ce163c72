"""k-FED (Dennis, Li & Smith, ICML 2021): what the pipeline produces for it, declared once.

The rules that compute its tables are in ``rules.smk`` beside this file, its captions'
templates in ``captions/``; its figures, gathered tables and claims are declared here
(:mod:`fedclust.pipeline.registry` reads them).
"""

from __future__ import annotations

from pathlib import Path

from ...pipeline.data import raw_files
from ...pipeline.declarations import (
    Figure,
    Paper,
    Table,
    differences_context,
    gathered_table,
    stated_differences,
)

__all__ = ["PAPER", "MIXTURE_EXPERIMENTS", "FEDERATED_EXPERIMENTS", "mixture_parts",
           "federated_parts", "oracle_ks", "oracle_inputs", "chosen_oracle_inputs",
           "table2_parts", "table2_settings", "table2_cells", "table2_setting_parts",
           "table2_batched", "fig4_parts",
           "fig4_settings", "fig4_input", "TABLE2_PART", "FIG4_PART"]

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
    """Per-data-set part tables of a federated experiment."""
    return [f"results/kfed/{experiment}/{ds}.csv"
            for ds in config["kfed"][experiment]["datasets"]]


#: One Table 2 cell (all its runs), and one Fig 4 curve (history, and final accuracy per device).
TABLE2_PART = "results/kfed/table2/n{n_devices}_k{device_clusters}_{method}.csv"
FIG4_PART = {"fig4": "results/kfed/fig4/{dataset}_{strategy}.csv",
             "fig4_devices": "results/kfed/fig4_devices/{dataset}_{strategy}.csv"}


def table2_parts(config) -> list[str]:
    cfg = config["kfed"]["table2"]
    return [TABLE2_PART.format(n_devices=z, device_clusters=kp, method=m)
            for z in cfg["n_devices"] for kp in cfg["device_clusters"] for m in cfg["methods"]]


def table2_settings(config) -> dict:
    """What a Table 2 job needs: every knob but the lists of cells (adding a cell reruns no
    other job), and the torch device."""
    return {**{k: v for k, v in config["kfed"]["table2"].items()
               if k not in ("n_devices", "device_clusters", "methods", "batch_cells")},
            "device": config.get("torch_device", "cpu")}


def table2_cells(config, n_devices: int | None = None,
                 device_clusters: int | None = None) -> list[list]:
    """Table 2's cells as ``[n_devices, device_clusters, method]``, in the order of
    :func:`table2_parts`; with ``n_devices`` and ``device_clusters``, that setting's methods
    (one batched job: they share the setting's rotated data)."""
    cfg = config["kfed"]["table2"]
    return [[z, kp, m] for z in cfg["n_devices"] for kp in cfg["device_clusters"]
            for m in cfg["methods"] if n_devices in (None, z) and device_clusters in (None, kp)]


def table2_setting_parts(config) -> list[str]:
    """The outputs of one batched Table 2 job: a setting's (Z, k') cell of every method, with
    the setting as wildcards."""
    return [TABLE2_PART.format(n_devices="{n_devices}", device_clusters="{device_clusters}",
                               method=m) for m in config["kfed"]["table2"]["methods"]]


def table2_batched(config) -> bool:
    """Whether one job trains every Table 2 cell (``batch_cells``; ``auto``: when
    ``torch_device`` resolves to a GPU here, checked without importing torch where there is
    no NVIDIA driver)."""
    batch = config["kfed"]["table2"].get("batch_cells", "auto")
    if batch == "auto":
        from ..._torch import uses_cuda

        return uses_cuda(config.get("torch_device", "cpu"))
    return bool(batch)


def fig4_parts(config, table: str = "fig4", dataset: str | None = None) -> list[str]:
    cfg = config["kfed"]["fig4"]
    return [FIG4_PART[table].format(dataset=ds, strategy=s) for ds in cfg["datasets"]
            if dataset in (None, ds) for s in cfg["strategies"]]


def fig4_batched(config) -> bool:
    """Whether one job per data set trains every strategy (``batch_strategies``)."""
    return bool(config["kfed"]["fig4"].get("batch_strategies", False))


def fig4_dataset_parts(config, table: str) -> list[str]:
    """The outputs of one batched Fig 4 job: the ``table`` part of every strategy, with the
    data set as a wildcard."""
    return [FIG4_PART[table].format(dataset="{dataset}", strategy=s)
            for s in config["kfed"]["fig4"]["strategies"]]


def fig4_settings(config, dataset: str) -> dict:
    """What a Fig 4 job on ``dataset`` needs: the shared knobs and its own subsection."""
    cfg = config["kfed"]["fig4"]
    shared = {k: v for k, v in cfg.items()
              if k not in ("datasets", "strategies", "femnist", "shakespeare",
                           "batch_strategies")}
    return {**shared, **cfg[dataset], "device": config.get("torch_device", "cpu")}


def fig4_input(dataset: str, config) -> str:
    """FEMNIST's prepared features; Shakespeare's raw text (the LSTM reads characters)."""
    if dataset == "femnist":
        return "data/femnist/features.h5"
    return raw_files("shakespeare", config)[0]


def _separation_grid(dataset: str, config, key: str) -> list[int]:
    """The separation analysis's k grid, for a job whose k it chooses (``key`` names the
    config key asking for it)."""
    sep = config["kfed"]["separation"]
    if dataset not in sep["datasets"]:
        raise ValueError(f"{key}: 'chosen' needs {dataset} in kfed.separation.datasets (it "
                         f"has {sep['datasets']})")
    return list(sep["k_grid"])


def oracle_ks(experiment: str, dataset: str, config) -> list[int]:
    """The oracle k an experiment may use on a data set: the whole separation grid when k is
    ``chosen`` (the choice is made by the separation analysis), else the configured k."""
    n_clusters = config["kfed"][experiment]["n_clusters"]
    if n_clusters == "chosen":
        return _separation_grid(dataset, config, f"kfed.{experiment}.n_clusters")
    return [int(n_clusters)]


def chosen_oracle_inputs(dataset: str, config, *, key: str) -> dict:
    """The inputs of a job on ``dataset`` whose k the separation analysis chooses: the
    oracle clusterings of its grid (``oracles``) and the chosen-k table (``chosen``)."""
    return {"oracles": [f"results/kfed/oracle/{dataset}/k{k}.h5"
                        for k in _separation_grid(dataset, config, key)],
            "chosen": f"results/kfed/separation/{dataset}/chosen_k.csv"}


def oracle_inputs(experiment: str, dataset: str, config) -> dict:
    """Input files of a federated experiment's rule besides the features: the oracle
    clusterings it may use (``oracles``) and, for ``n_clusters: chosen``, the chosen-k table
    (``chosen``)."""
    if config["kfed"][experiment]["n_clusters"] == "chosen":
        return chosen_oracle_inputs(dataset, config, key=f"kfed.{experiment}.n_clusters")
    return {"oracles": [f"results/kfed/oracle/{dataset}/k{k}.h5"
                        for k in oracle_ks(experiment, dataset, config)]}


def _separation_datasets(config) -> list[str]:
    return list(config["kfed"]["separation"]["datasets"])


def _has_datasets(experiment):
    return lambda config: bool(config["kfed"][experiment]["datasets"])


def _runs(config, experiment) -> int:
    return config["kfed"][experiment]["runs"]


def _fig4_caption_context(config, dataset) -> dict:
    """A Fig 4 caption's settings: the shared knobs and the data set's own subsection."""
    return {"cfg": fig4_settings(config, dataset),
            "differences": stated_differences(config, "kfed", "fig4")}


def _fig4_datasets(config) -> list[str]:
    return list(config["kfed"]["fig4"]["datasets"])


#: The authors' code on Table 1's runs (benchmarks/kfed_authors_table1.py, committed): its means
#: stand beside the paper's and ours in a reported row per Table 1 row.
AUTHORS_TABLE1 = "benchmarks/results/kfed_authors_table1.csv"


def _claim_inputs(config) -> dict[str, str]:
    cfg = config["kfed"]
    inputs = {"table1": "results/kfed/table1.csv", "fig1": "results/kfed/fig1.csv"}
    for ds in _separation_datasets(config):
        inputs[f"separation/{ds}"] = f"results/kfed/separation/{ds}/summary.csv"
    for experiment in ("fig2", "fig3"):
        if cfg[experiment]["datasets"]:
            inputs[experiment] = f"results/kfed/{experiment}.csv"
    inputs["table2"] = "results/kfed/table2.csv"
    if Path(AUTHORS_TABLE1).exists():
        inputs["authors_table1"] = AUTHORS_TABLE1
    if cfg["fig4"]["datasets"]:
        inputs["fig4"] = "results/kfed/fig4.csv"
        inputs["fig4_devices"] = "results/kfed/fig4_devices.csv"
    return inputs


def _extra_targets(config) -> list[str]:
    return ["results/kfed/table1.md"] + [f"results/kfed/separation/{ds}/chosen_k.csv"
                                         for ds in _separation_datasets(config)]


PAPER = Paper(
    key="kfed",
    title=CITATION,
    figures=(
        Figure("fig1_accuracy_vs_separation", gathered_table("kfed", "fig1"),
               "kfed/fig1_accuracy_vs_separation.rst"),
        Figure("fig5_separation_{dataset}",
               lambda config, ds: [f"results/kfed/separation/{ds}/pairs.csv",
                                   f"results/kfed/separation/{ds}/summary.csv"],
               "kfed/fig5_separation_dataset.rst", datasets=_separation_datasets),
        Figure("fig2_structured_vs_iid", gathered_table("kfed", "fig2"),
               "kfed/fig2_structured_vs_iid.rst", enabled=_has_datasets("fig2")),
        Figure("fig3_kfed_vs_distributed_lloyd", gathered_table("kfed", "fig3"),
               "kfed/fig3_kfed_vs_distributed_lloyd.rst", enabled=_has_datasets("fig3")),
        Figure("participation", gathered_table("kfed", "participation"), "kfed/participation.rst",
               enabled=_has_datasets("participation")),
        Figure("new_devices", gathered_table("kfed", "new_devices"), "kfed/new_devices.rst",
               enabled=_has_datasets("new_devices")),
        Figure("heterogeneity", gathered_table("kfed", "heterogeneity"), "kfed/heterogeneity.rst",
               enabled=_has_datasets("heterogeneity")),
        Figure("table2_rotated_mnist", gathered_table("kfed", "table2"),
               "kfed/table2_rotated_mnist.rst",
               caption_context=differences_context("kfed", "table2")),
        Figure("fig4_client_selection_{dataset}",
               lambda config, ds: fig4_parts(config, "fig4", ds)
               + fig4_parts(config, "fig4_devices", ds),
               "kfed/fig4_client_selection_dataset.rst", caption_context=_fig4_caption_context,
               datasets=_fig4_datasets),
    ),
    tables=tuple(Table(e, lambda config, e=e: mixture_parts(e, config))
                 for e in MIXTURE_EXPERIMENTS)
    + tuple(Table(e, lambda config, e=e: federated_parts(e, config))
            for e in FEDERATED_EXPERIMENTS)
    + (Table("table2", table2_parts),
       Table("fig4", lambda config: fig4_parts(config, "fig4")),
       Table("fig4_devices", lambda config: fig4_parts(config, "fig4_devices"))),
    claim_inputs=_claim_inputs,
    extra_targets=_extra_targets,
    # the rendered Table 1 (kfed_table1) and each data set's chosen k (kfed_separation)
    table_captions={"table1": "kfed/table1.rst", "chosen_k": "kfed/chosen_k.rst"},
)

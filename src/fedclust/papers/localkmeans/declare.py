"""LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025): what the pipeline produces for it.

The rules that compute its tables are in ``rules.smk`` beside this file, its captions'
templates in ``captions/``; its figures, gathered tables and claims are declared here
(:mod:`fedclust.pipeline.registry` reads them).
"""

from __future__ import annotations

from ...pipeline.declarations import (
    Figure,
    Paper,
    Table,
    differences_context,
    gathered_table,
    stated_differences,
)
from . import FIG4_SWEEPS, INIT_FILE_NAMES

__all__ = ["PAPER", "fig1_parts", "fig4_parts",
           "real_parts", "init_of_file_name"]

CITATION = "LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025)"
#: How an initialization is spelled in file names; Figure 4's sweeps (App. B.2).

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
    # the second reading of the K sweep runs wherever the K sweep does
    return [f"results/localkmeans/fig4/{sweep}.csv" for sweep in FIG4_SWEEPS
            if cfg[sweep.replace("_other", "")]]


def real_parts(config) -> list[str]:
    return [f"results/localkmeans/real/{ds}.csv"
            for ds in config["localkmeans"]["real"]["datasets"]]


def _has_real(config) -> bool:
    return bool(config["localkmeans"]["real"]["datasets"])


def _fig4_caption_context(config, dataset=None) -> dict:
    """Figure 4(b)'s separation Δ/σ where it holds it as K varies (its value at the sweep's
    SNR for the synthetic section's K), and the stated reasons to differ."""
    from .snr import separation_for_snr

    syn, cfg = config["localkmeans"]["synthetic"], config["localkmeans"]["fig4"]
    separation = separation_for_snr(
        cfg["sweep_snr"], n_clusters=syn["n_clusters"], n_features=syn["n_features"],
        n_samples=syn["n_machines"] * syn["samples_per_machine"])
    return {"separation": separation,
            "differences": stated_differences(config, "localkmeans", "fig4")}


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
               "localkmeans/fig1_misclustering.rst",
               caption_context=differences_context("localkmeans", "fig1"),
               options={"metric": "misclustering", "rows": "snr", "cols": "init",
                        "ylabel": "misclustering rate",
                        "title": "LocalKMeans on Gaussian mixtures"}),
        Figure("fig4_sweeps", gathered_table("localkmeans", "fig4"),
               "localkmeans/fig4_sweeps.rst", caption_context=_fig4_caption_context),
        Figure("fig2_misclustering_real", gathered_table("localkmeans", "real"),
               "localkmeans/fig2_misclustering_real.rst",
               caption_context=differences_context("localkmeans", "real"), enabled=_has_real,
               options={"metric": "misclustering", "cols": "dataset",
                        "ylabel": "misclustering rate", "title": "LocalKMeans on real data"}),
        Figure("fig3_objective_real", gathered_table("localkmeans", "real"),
               "localkmeans/fig3_objective_real.rst",
               caption_context=differences_context("localkmeans", "real"), enabled=_has_real,
               options={"metric": "objective / centralized", "cols": "dataset",
                        "objective": "global_objective", "own_objective": True,
                        "ylabel": "k-means objective (global model)\n/ centralized Lloyd's "
                                  "final",
                        "title": "LocalKMeans on real data: k-means objective"}),
    ),
    tables=(Table("fig1", fig1_parts), Table("fig4", fig4_parts), Table("real", real_parts)),
    claim_inputs=_claim_inputs,
)

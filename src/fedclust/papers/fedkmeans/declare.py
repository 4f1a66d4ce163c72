"""Federated k-means (Triebe & Rajagopal, 2019): what the pipeline produces.

The rules that compute its tables are in ``rules.smk`` beside this file, its captions'
templates in ``captions/``; its figures, gathered tables and claims are declared here
(:mod:`fedclust.pipeline.registry` reads them).

Tables: ``results/fedkmeans/sweeps/<sweep>.csv`` (one hyper-parameter sweep, every value and
seed; gathered in ``sweeps.csv``) and ``results/fedkmeans/progress/<run>.csv`` (one run's
centroids round by round; gathered in ``progress.csv``) and
``results/fedkmeans/real/<data set>.csv`` (beyond the paper: natural clients of real data,
beside k-FED and LocalKMeans; gathered in ``real.csv``).
"""

from __future__ import annotations

from pathlib import Path

from ...pipeline.declarations import Figure, Paper, Table
from ..kfed.declare import chosen_oracle_inputs
from . import SYMBOLS, VARIED_TITLES

__all__ = ["PAPER", "CITATION", "shared_settings", "sweep_part", "sweep_parts", "sweeps_batched",
           "sweep_specs", "progress_part", "real_part", "real_inputs"]

CITATION = "Federated k-means (Triebe & Rajagopal, 2019)"
# the paper's names, on the ground floor (experiments, plots and claims read them there)
#: The authors' code run at Fig 5's printed settings (benchmarks/fedkmeans_authors.py, committed):
#: its numbers stand beside the paper's and ours in the reassignment rows, where it exists.
AUTHORS_TABLE = "benchmarks/results/fedkmeans_authors.csv"
#: What a sweep's or a progress run's name may be (it is part of file names).
_NAME = r"[A-Za-z0-9]+"


def _section(config) -> dict:
    return config["fedkmeans"]


def shared_settings(config, *, real: bool = False) -> dict:
    """The section's settings a job needs: every shared knob, not the other jobs' lists (so
    that adding a sweep, a progress run or a real data set reruns no other job); ``real``
    adds the real-data subsection."""
    skip = ({"enabled", "sweeps", "progress", "real", "batch_sweeps"}
            - ({"real"} if real else set()))
    return {key: value for key, value in _section(config).items() if key not in skip}


def sweep_part(sweep: str) -> str:
    return f"results/fedkmeans/sweeps/{sweep}.csv"


def sweep_parts(config) -> list[str]:
    """Every sweep's table, in the config's order."""
    return [sweep_part(s) for s in _sweeps(config)]


def sweeps_batched(config) -> bool:
    """Whether one job computes every sweep (``batch_sweeps``, when there are sweeps)."""
    return bool(_section(config).get("batch_sweeps", False) and _section(config)["sweeps"])


def sweep_specs(config) -> dict:
    """Every sweep's spec by name, in the config's order (the batched job's parameter)."""
    return dict(_section(config)["sweeps"])


def progress_part(name: str) -> str:
    return f"results/fedkmeans/progress/{name}.csv"


def real_part(dataset: str) -> str:
    return f"results/fedkmeans/real/{dataset}.csv"


def real_inputs(dataset: str, config) -> dict:
    """The real-data job's inputs besides the features: the k-FED separation analysis's
    oracle clusterings and chosen k (``kfed.separation``)."""
    return chosen_oracle_inputs(dataset, config, key="fedkmeans.real.datasets")


def _real(config) -> list[str]:
    return list(_section(config)["real"]["datasets"])


def _sweeps(config) -> list[str]:
    return list(_section(config)["sweeps"])


def _progress(config) -> list[str]:
    return list(_section(config)["progress"])


def _sweep_caption_context(config, sweep=None) -> dict:
    """How a sweep's caption names the hyper-parameters (as the figures do), and the stated
    reason to differ of the paper's figure it reproduces (its ``why_ours_differs`` in the
    targets; a second reading takes its ``seeds_of`` figure's)."""
    from ...reproduction import load_targets

    spec = _section(config)["sweeps"].get(sweep, {}) if sweep else {}
    figures = load_targets(config["paper_targets"])["fedkmeans"]["sweeps"][
        "read_from_figures"]["figures"]
    why = " ".join(str(figures.get(spec.get("seeds_of", sweep), {}).get(
        "why_ours_differs", "")).split())
    return {"symbols": SYMBOLS, "varied_titles": VARIED_TITLES,
            "differences": (f" Where our setting can differ from the paper, and why: "
                            f"{why.rstrip('.')}.") if why else ""}


PAPER = Paper(
    key="fedkmeans",
    title=CITATION,
    figures=(
        # one figure per sweep or run the config declares (named as the paper's figure)
        Figure("sweep_{dataset}", lambda config, sweep: [sweep_part(sweep)],
               "fedkmeans/sweep_dataset.rst", caption_context=_sweep_caption_context,
               datasets=_sweeps, instance_pattern=_NAME),
        Figure("progress_{dataset}", lambda config, name: [progress_part(name)],
               "fedkmeans/progress_dataset.rst", datasets=_progress, instance_pattern=_NAME),
        Figure("real_{dataset}", lambda config, ds: [real_part(ds)],
               "fedkmeans/real_dataset.rst", datasets=_real),
    ),
    tables=(Table("sweeps", sweep_parts),
            Table("progress", lambda config: [progress_part(p) for p in _progress(config)]),
            Table("real", lambda config: [real_part(ds) for ds in _real(config)])),
    claim_inputs=lambda config: {
        **({"sweeps": "results/fedkmeans/sweeps.csv"} if _sweeps(config) else {}),
        **({"progress": "results/fedkmeans/progress.csv"} if _progress(config) else {}),
        **({"real": "results/fedkmeans/real.csv"} if _real(config) else {}),
        **({"authors": AUTHORS_TABLE} if Path(AUTHORS_TABLE).exists() else {})},
)

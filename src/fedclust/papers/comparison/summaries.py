"""What the comparison's figures show and its claims check, computed once from its table."""

from __future__ import annotations

import pandas as pd

from ...io import SKIPPED
from ...vocabulary import ALGORITHM_TITLES
from ..coreset import GRAPH_TITLES

__all__ = ["comparison_stats", "label_of"]

_KEYS = ["dataset", "partition", "algorithm", "variant", "dropout"]


def comparison_stats(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over runs of every metric, one row per (setting, algorithm, variant,
    dropout); ``cost_ratio_min`` / ``_max`` its range
    over the runs; ``runs`` counts the runs done (skipped runs are left out)."""
    done = table[table["metric"] != SKIPPED]
    wide = done.pivot_table(index=_KEYS + ["run"], columns="metric", values="value",
                            aggfunc="first").reset_index()
    metrics = [c for c in wide.columns if c not in _KEYS + ["run"]]
    grouped = wide.groupby(_KEYS, sort=False)
    stats = grouped[metrics].mean()
    stats = stats.join(grouped[metrics].std().add_suffix("_std")).join(
        grouped["cost_ratio"].min().rename("cost_ratio_min")).join(
        grouped["cost_ratio"].max().rename("cost_ratio_max")).join(
        grouped.size().rename("runs"))
    return stats.reset_index()


def label_of(row) -> str:
    """How legends and claims name an algorithm and its variant."""
    name = ALGORITHM_TITLES.get(row.algorithm, row.algorithm)
    variant = GRAPH_TITLES.get(row.variant, row.variant)
    return name if row.variant == "k-means++" else f"{name} {variant}"

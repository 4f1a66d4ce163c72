"""What the coreset paper's figures show and its claims check, computed once from its tables."""

from __future__ import annotations

import pandas as pd

__all__ = ["wide_runs", "curve_stats"]


def wide_runs(table: pd.DataFrame) -> pd.DataFrame:
    """A tidy setting table (``metric``, ``value``) with one column per metric: one row per
    run, construction, network and coreset size."""
    if "metric" not in table.columns:
        return table
    ids = [c for c in table.columns if c not in ("metric", "value", "reason")]
    wide = table.set_index([*ids, "metric"])["value"].unstack("metric")
    wide.columns.name = None
    return wide.reset_index()


def curve_stats(runs: pd.DataFrame, x: str = "points_transmitted") -> pd.DataFrame:
    """Per construction, network and coreset size: the mean communication ``x`` and the mean
    and standard deviation of the cost ratio over runs (what one point of a curve shows)."""
    keys = ["algorithm", "network", "coreset_size"]
    stats = runs.groupby(keys).agg(x=(x, "mean"), ratio=("cost_ratio", "mean"),
                                   ratio_std=("cost_ratio", "std"),
                                   runs=("run", "nunique")).reset_index()
    return stats.fillna({"ratio_std": 0.0}).sort_values(keys)

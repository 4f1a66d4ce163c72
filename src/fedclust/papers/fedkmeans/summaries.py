"""What federated k-means' figures show and its claims check, computed once from its tables."""

from __future__ import annotations

import pandas as pd

__all__ = ["sweep_stats", "real_stats"]


def sweep_stats(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and seeds (``count``) over the seeds of every (sweep, setting, split,
    metric), settings in each sweep's order (``position``; central k-means last)."""
    stats = (table.groupby(["sweep", "position", "setting", "split", "metric"])["value"]
             .agg(["mean", "std", "count"]).reset_index())
    stats["std"] = stats["std"].fillna(0.0)  # one seed: no spread
    return stats.sort_values(["sweep", "position", "split", "metric"]).reset_index(drop=True)


def real_stats(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and std of the cost ratio and mean floats sent (up and down) of every
    (algorithm, variant) of the natural-client runs; skipped runs left out."""
    done = table[table["metric"].isin(["cost_ratio", "floats"])]
    wide = done.pivot_table(index=["algorithm", "variant", "run"], columns="metric",
                            values="value").reset_index()
    return (wide.groupby(["algorithm", "variant"])
            .agg(ratio=("cost_ratio", "mean"), ratio_std=("cost_ratio", "std"),
                 floats=("floats", "mean"), runs=("run", "nunique"))
            .fillna({"ratio_std": 0.0}).reset_index())

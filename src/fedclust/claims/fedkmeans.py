"""Federated k-means' statements (Triebe & Rajagopal 2019, Sec. 3-4) against ours.

The paper prints no table: the values of Figs 1 and 2(b) read from the plots are compared one
by one (``config/paper_targets.yaml``, section ``fedkmeans``), and the two statements of the
text -- the federated algorithm matches or beats central k-means with suitable
hyper-parameters, one client per round is worst -- become one number each, on the test
clients.
"""

from __future__ import annotations

import math

import pandas as pd

from ..pipeline.fedkmeans import CENTRAL
from ..plots.fedkmeans import real_stats, sweep_stats
from ..reproduction import Claim, checked, target

__all__ = ["PAPER", "claims", "sweep_means"]

PAPER = "Federated k-means (Triebe & Rajagopal 2019)"


def sweep_means(table: pd.DataFrame, split: str) -> pd.DataFrame:
    """:func:`~fedclust.plots.fedkmeans.sweep_stats` of one split (``count``: the seeds)."""
    stats = sweep_stats(table)
    return stats[stats["split"] == split].reset_index(drop=True)


def _read_claims(means: pd.DataFrame, spec: dict) -> list[Claim]:
    """Every value read from a figure against our mean, within the reading's tolerance plus
    ``standard_errors`` standard errors of our mean over seeds."""
    out = []
    for sweep, metrics in spec["values"].items():
        for metric, values in metrics.items():
            for setting, value in values.items():
                row = means[(means["sweep"] == sweep) & (means["setting"] == str(setting))
                            & (means["metric"] == metric)]
                if row.empty:
                    continue  # a sweep or setting this config does not run
                r = row.iloc[0]
                sem = float(r["std"]) / math.sqrt(r["count"])
                tol = spec["reading_tolerance"][metric] + spec["standard_errors"] * sem
                out.append(Claim(
                    paper=PAPER, item=f"{sweep}, C = {setting}" if setting != CENTRAL
                    else f"{sweep}, central k-means",
                    quantity=f"{metric.replace('_', ' ')} ({spec['split']} clients)",
                    reproduced=float(r["mean"]), paper_value=float(value), tolerance=tol,
                    comparison="abs_diff", provenance=str(spec["provenance"]).strip(),
                    where=spec["where"], explanation=str(spec["why_ours_differs"]).strip(),
                    note=f"{int(r['count'])} seeds, std {r['std']:.3f}"))
    return out


def _real_claims(table: pd.DataFrame, targets: dict) -> list[Claim]:
    """Beyond the paper, reported: every algorithm's and setting's cost over the pooled
    k-means oracle and its floats on each real data set."""
    spec = target(targets, "fedkmeans", "real", "cost_over_oracle")
    out = []
    for dataset, part in table.groupby("dataset", sort=False):
        for _, row in real_stats(part).iterrows():
            out.append(checked(
                spec, paper=PAPER, item=f"{dataset}, {row['algorithm']} {row['setting']}",
                quantity="k-means cost over the pooled k-means oracle",
                reproduced=float(row["ratio"]),
                note=f"{int(row['runs'])} runs, std {row['ratio_std']:.3f}, "
                     f"{row['floats']:.3g} floats sent"))
    return out


def _c_sweeps(table: pd.DataFrame) -> list[str]:
    return [s for s, part in table.groupby("sweep", sort=False)
            if part["varied"].iloc[0] == "sample_fraction"]


def claims(tables: dict[str, pd.DataFrame], targets: dict) -> list[Claim]:
    """Every federated k-means claim from the gathered table ``sweeps``."""
    out = _real_claims(tables["real"], targets) if "real" in tables else []
    if "sweeps" not in tables:
        return out
    table = tables["sweeps"]
    spec = target(targets, "fedkmeans", "sweeps")
    read = spec["read_from_figures"]
    means = sweep_means(table, read["split"])
    out += _read_claims(means, read)
    sweeps = _c_sweeps(table)
    if not sweeps:
        return out
    c_means = means[means["sweep"].isin(sweeps)]
    for metric in ("mean_distance", "davies_bouldin"):
        sub = c_means[c_means["metric"] == metric]
        central = sub[sub["setting"] == CENTRAL]["mean"].mean()
        federated = sub[sub["setting"] != CENTRAL]
        best = federated.loc[federated["mean"].idxmin()]
        out.append(checked(
            spec["match_or_beat_central"], paper=PAPER,
            item=f"best federated setting vs central k-means ({metric.replace('_', ' ')})",
            quantity=f"best federated minus central, {read['split']} clients",
            reproduced=float(best["mean"] - central),
            note=f"best: {best['sweep']} C = {best['setting']} ({best['mean']:.3f}); central "
                 f"{central:.3f} (mean over {', '.join(sweeps)})"))
    few = set(spec["few_clients_worst"]["settings"])
    for sweep in sweeps:
        sub = c_means[(c_means["sweep"] == sweep) & (c_means["metric"] == "mean_distance")]
        small = sub[sub["setting"].isin(few)]
        rest = sub[~sub["setting"].isin(few)]
        if small.empty or rest.empty:
            continue
        out.append(checked(
            spec["few_clients_worst"], paper=PAPER, item=f"{sweep}: one client per round",
            quantity="best one-client setting minus the worst other (mean distance, "
                     f"{read['split']} clients)",
            reproduced=float(small["mean"].min() - rest["mean"].max()),
            note=", ".join(f"{s}: {m:.3f}" for s, m in zip(sub["setting"], sub["mean"],
                                                            strict=True))))
    return out

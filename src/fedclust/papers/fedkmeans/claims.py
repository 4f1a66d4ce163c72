"""Federated k-means' statements (Triebe & Rajagopal 2019, Sec. 3-4) against ours: the values
of Figs 1-5 read from the plots (``config/paper_targets.yaml``, section ``fedkmeans``), the two
statements of the text as one number each, and our final centroids for Figs 6-7, which print no
number. :func:`claims` builds every row; how the values are compared and what stands beside
each: docs/reproduction.md, *Federated k-means*.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...reproduction import Claim, checked, run_spread, target
from . import CENTRAL, SYMBOLS
from .summaries import real_stats, sweep_stats

__all__ = ["PAPER", "claims", "sweep_means", "seed_outcomes"]

PAPER = "Federated k-means (Triebe & Rajagopal 2019)"
#: The sweep table's metric of the Gaussians a run left without a centroid of their own.
_MISSED = "gaussians_missed"


def sweep_means(table: pd.DataFrame, split: str) -> pd.DataFrame:
    """:func:`~fedclust.papers.fedkmeans.summaries.sweep_stats` of one split (``count``: the
    seeds)."""
    stats = sweep_stats(table)
    return stats[stats["split"] == split].reset_index(drop=True)


def seed_outcomes(table: pd.DataFrame, split: str) -> pd.DataFrame:
    """One row per (sweep, setting, seed, metric) of ``split`` with ``missed``: the Gaussians
    the run left without a centroid of their own (the sweep table's ``gaussians_missed``; NaN
    when the table has none)."""
    values = table[table["split"] == split][["sweep", "setting", "seed", "metric", "value"]]
    missed = table[table["metric"] == _MISSED][["sweep", "setting", "seed", "value"]]
    missed = missed.rename(columns={"value": "missed"})
    return values.merge(missed, on=["sweep", "setting", "seed"], how="left")


def _composition(runs: pd.DataFrame) -> tuple[str, str]:
    """``(note, reason)``: how many of the seeds found all the Gaussians and the mean of each
    kind, measured."""
    n = len(runs)
    if n == 0 or runs["missed"].isna().all():
        return "", "the sweep table records no outcome per seed"
    ok = runs[runs["missed"] == 0]["value"]
    stuck = runs[runs["missed"] > 0]["value"]
    note = f"{len(ok)} of {n} seeds found every Gaussian"
    parts = []
    if len(ok):
        parts.append(f"{len(ok)} of {n} seeds found every Gaussian (mean {ok.mean():.3f})")
    if len(stuck):
        parts.append(f"{len(stuck)} stopped in a local optimum, a Gaussian without a centroid "
                     f"of its own (mean {stuck.mean():.3f})")
    return note, "; ".join(parts)


def _setting_item(sweep: str, varied: str, setting: str) -> str:
    if setting == CENTRAL:
        return f"{sweep}, central k-means"
    return f"{sweep}, {SYMBOLS.get(varied, varied)} = {setting}"


def _read_claims(table: pd.DataFrame, spec: dict) -> list[Claim]:
    """Every value read from a figure against our mean over seeds (the same-value test with
    the paper's shading and our seeds' spread, plus the reading error); with how the seeds
    split between finding the Gaussians and stopping in a local optimum."""
    split = spec["split"]
    means = sweep_means(table, split) if not table.empty else pd.DataFrame(
        columns=["sweep", "setting", "metric", "mean", "std", "count"])
    runs = seed_outcomes(table, split) if not table.empty else pd.DataFrame(
        columns=["sweep", "setting", "seed", "metric", "value", "missed"])
    varied = (table.groupby("sweep")["varied"].first().to_dict() if not table.empty else {})
    out = []
    for sweep, figure in spec["figures"].items():
        provenance = str(figure["provenance"]).replace("results/<file>",
                                                       str(figure.get("file", "")))
        for metric, values in figure["values"].items():
            reading = figure.get("reading_error", spec["reading_error"])
            tolerance = float(reading[metric])
            paper_sds = figure.get("sd", {}).get(metric, {})
            for setting, value in values.items():
                setting = str(setting)
                paper_sd = float(paper_sds.get(setting, math.nan))
                comparison, paper_value = figure["comparison"], value
                if isinstance(value, dict):  # a value off the plot: a bound
                    (comparison, paper_value), = value.items()
                row = means[(means["sweep"] == sweep) & (means["setting"] == setting)
                            & (means["metric"] == metric)]
                common = dict(paper=PAPER, key=getattr(figure, "key", ""),
                              item=_setting_item(sweep, varied.get(sweep, _varied_of(sweep)),
                                                 setting),
                              quantity=f"{metric.replace('_', ' ')} ({split} clients)",
                              paper_value=float(paper_value), tolerance=tolerance,
                              paper_sd=paper_sd, n_paper=float(spec["runs"]),
                              comparison=comparison, provenance=" ".join(provenance.split()),
                              where=str(figure["where"]))
                if row.empty:
                    why = (f"not measured: the run has no sweep {sweep}"
                           if sweep not in varied else
                           f"not measured: sweep {sweep} has no setting {setting}")
                    out.append(Claim(reproduced=math.nan, explanation=why, **common))
                    continue
                r = row.iloc[0]
                seeds = runs[(runs["sweep"] == sweep) & (runs["setting"] == setting)
                             & (runs["metric"] == metric)]
                note, reason = _composition(seeds)
                n = int(r["count"])
                claim = Claim(reproduced=float(r["mean"]), ours_sd=float(r["std"]),
                              n_ours=float(n),
                              note=f"{n} seeds, std {r['std']:.3f} (standard error of the "
                                   f"mean {r['std'] / math.sqrt(n):.3f})"
                                   + (f"; {note}" if note else ""), **common)
                if not claim.within_band:
                    side = "above" if claim.reproduced > claim.paper_value else "below"
                    claim.explanation = "; ".join(t for t in (
                        f"our mean {claim.reproduced:.3f} is {side} the paper's "
                        f"{claim.paper_value:.3g}: {reason}",
                        " ".join(str(figure.get("why_ours_differs", "")).split())) if t)
                out.append(claim)
    return out


def _varied_of(sweep: str) -> str:
    """The varied hyper-parameter of a sweep the run did not compute, by the paper's figure
    (Figs 1-3 vary C, 4 E, 5 beta)."""
    return {"fig4": "local_epochs", "fig5": "client_lr"}.get(sweep[:4], "sample_fraction")


def _real_claims(table: pd.DataFrame, targets: dict) -> list[Claim]:
    """Beyond the paper, reported: every algorithm's and variant's cost over the pooled
    k-means oracle and its floats on each real data set."""
    spec = target(targets, "fedkmeans", "real", "cost_over_oracle")
    out = []
    for dataset, part in table.groupby("dataset", sort=False):
        for _, row in real_stats(part).iterrows():
            out.append(checked(
                spec, paper=PAPER, item=f"{dataset}, {row['algorithm']} {row['variant']}",
                quantity="k-means cost over the pooled k-means oracle",
                reproduced=float(row["ratio"]),
                note=f"{int(row['runs'])} runs, std {row['ratio_std']:.3f}, "
                     f"{row['floats']:.3g} floats sent"))
    return out


def _progress_claims(table: pd.DataFrame, targets: dict) -> list[Claim]:
    """Figs 6-7, reported: after the last round of each progress run, the largest distance
    from a Gaussian's mean to its nearest centroid, and the Gaussians with a centroid of
    their own."""
    from ...metrics import gaussians_found

    spec = target(targets, "fedkmeans", "progress", "final_centroids")
    out = []
    for name, part in table.groupby("progress", sort=False):
        last = part[(part["round"] == part["round"].max()) & (part["metric"] == "center")]
        centers = np.sort(last["value"].to_numpy())
        means = np.array([float(m) for m in str(part["data_means"].iloc[0]).split()])
        gap = float(np.abs(means[:, None] - centers[None, :]).min(axis=1).max())
        found = gaussians_found(centers[:, None], means)
        out.append(checked(
            spec, paper=PAPER, item=f"{name}, after the last round",
            quantity="largest distance from a Gaussian's mean to its nearest centroid",
            reproduced=gap,
            note=f"round {int(part['round'].max())}; {found} of {len(means)} Gaussians with "
                 f"a centroid of their own; centroids "
                 + ", ".join(f"{c:.2f}" for c in centers)))
    return out


def _c_sweeps(table: pd.DataFrame) -> list[str]:
    return [s for s, part in table.groupby("sweep", sort=False)
            if part["varied"].iloc[0] == "sample_fraction"]


def _per_seed(runs: pd.DataFrame, metric: str, sweeps, settings) -> pd.Series:
    """The per-seed value of ``metric`` over ``settings`` of ``sweeps`` (averaged over the
    sweeps where several hold the setting), indexed by seed."""
    sub = runs[runs["sweep"].isin(list(sweeps)) & runs["setting"].isin(list(settings))
               & (runs["metric"] == metric)]
    return sub.groupby("seed")["value"].mean()


def _statement_claims(table: pd.DataFrame, spec: dict, split: str) -> list[Claim]:
    """The two statements of the text over the sweeps of C: the best federated setting
    against central k-means, and one client per round worst; each tested on its differences
    paired by seed (every setting of a sweep runs the same seeds)."""
    means = sweep_means(table, split) if not table.empty else None
    runs = seed_outcomes(table, split) if not table.empty else None
    sweeps = _c_sweeps(table) if not table.empty else []
    out = []
    for metric in ("mean_distance", "davies_bouldin"):
        item = f"best federated setting vs central k-means ({metric.replace('_', ' ')})"
        quantity = f"best federated minus central, {split} clients"
        sub = means[means["sweep"].isin(sweeps) & (means["metric"] == metric)] \
            if sweeps else pd.DataFrame(columns=["setting", "mean"])
        central = sub[sub["setting"] == CENTRAL]["mean"].mean()
        federated = sub[sub["setting"] != CENTRAL]
        if federated.empty or math.isnan(central):
            out.append(checked(spec["match_or_beat_central"], paper=PAPER, item=item,
                               quantity=quantity, reproduced=math.nan,
                               explanation="not measured: the run has no sweep of C with "
                                           "central k-means"))
            continue
        best = federated.loc[federated["mean"].idxmin()]
        # paired by seed: the seeds both hold
        spread = run_spread(_per_seed(runs, metric, [best["sweep"]], [best["setting"]])
                            - _per_seed(runs, metric, sweeps, [CENTRAL]))
        claim = checked(
            spec["match_or_beat_central"], paper=PAPER, item=item, quantity=quantity,
            reproduced=float(best["mean"] - central), **spread,
            note=f"best: {best['sweep']} C = {best['setting']} ({best['mean']:.3f}); central "
                 f"{central:.3f} (mean over {', '.join(sweeps)})")
        if not claim.within_band:
            claim.explanation = (f"no federated setting's mean is below central k-means' "
                                 f"{central:.3f}: the best, {best['sweep']} C = "
                                 f"{best['setting']}, is {best['mean']:.3f}")
        out.append(claim)
    few = set(spec["few_clients_worst"]["settings"])
    for sweep in sweeps or ["(none)"]:
        item = f"{sweep}: one client per round"
        quantity = f"best one-client setting minus the worst other (mean distance, {split} clients)"
        sub = means[(means["sweep"] == sweep) & (means["metric"] == "mean_distance")] \
            if sweeps else pd.DataFrame(columns=["setting", "mean"])
        small = sub[sub["setting"].isin(few)]
        rest = sub[~sub["setting"].isin(few)]
        if small.empty or rest.empty:
            out.append(checked(spec["few_clients_worst"], paper=PAPER, item=item,
                               quantity=quantity, reproduced=math.nan,
                               explanation=f"not measured: {sweep} lacks a one-client setting "
                                           f"({', '.join(sorted(few))}) or another one"))
            continue
        best_small = small.loc[small["mean"].idxmin()]
        worst_rest = rest.loc[rest["mean"].idxmax()]
        spread = run_spread(
            _per_seed(runs, "mean_distance", [sweep], [best_small["setting"]])
            - _per_seed(runs, "mean_distance", [sweep], [worst_rest["setting"]]))
        claim = checked(
            spec["few_clients_worst"], paper=PAPER, item=item, quantity=quantity,
            reproduced=float(best_small["mean"] - worst_rest["mean"]), **spread,
            note=", ".join(f"{s}: {m:.3f}" for s, m in zip(sub["setting"], sub["mean"],
                                                           strict=True)))
        if not claim.within_band:
            claim.explanation = (f"C = {best_small['setting']} (one client per round) has a "
                                 f"mean distance of {best_small['mean']:.3f}, below "
                                 f"{worst_rest['setting']}'s {worst_rest['mean']:.3f}")
        out.append(claim)
    return out


def _reassignment_claims(table: pd.DataFrame, spec: dict, read: dict,
                         authors: pd.DataFrame | None) -> list[Claim]:
    """Fig 5 per client rate, reported: which reassignment rule lands on the paper's curve --
    the printed one (Sec. 2.3) or the authors' code's (a sweep on the same seeds) -- each by
    the same-value test against the paper's value, with the authors' code's own mean where
    its benchmark table holds it."""
    split, metric = read["split"], "mean_distance"
    means = sweep_means(table, split) if not table.empty else pd.DataFrame(
        columns=["sweep", "setting", "metric", "mean", "std", "count"])
    out = []
    for figure, variant in spec["readings"].items():
        fig = read["figures"][figure]
        sds = fig.get("sd", {}).get(metric, {})
        reading = float(fig.get("reading_error", read["reading_error"])[metric])
        for setting, value in fig["values"][metric].items():
            setting = str(setting)
            paper = dict(paper_value=float(value), paper_sd=float(sds.get(setting, math.nan)),
                         n_paper=float(read["runs"]), tolerance=reading)
            verdicts, parts = {}, []
            for name, sweep in (("printed rule", figure), ("authors' rule", variant)):
                row = means[(means["sweep"] == sweep) & (means["setting"] == setting)
                            & (means["metric"] == metric)]
                if row.empty:
                    parts.append(f"{name}: not run")
                    continue
                r = row.iloc[0]
                test = Claim(paper=PAPER, item="", quantity="", reproduced=float(r["mean"]),
                             ours_sd=float(r["std"]), n_ours=float(r["count"]), **paper)
                verdicts[name] = (test.status, abs(test.statistic), float(r["mean"]))
                parts.append(f"{name} {r['mean']:.3f} ± {r['std']:.3f} ({int(r['count'])} "
                             f"seeds): {test.status} (band ±{test.band:.3f})")
            if authors is not None and not authors.empty:
                code = authors[(authors["figure"] == figure) & (authors["split"] == split)
                               & (authors["metric"] == metric)
                               & (authors["beta"].astype(float) == float(setting))]["value"]
                if len(code):
                    parts.append(f"authors' code {code.mean():.3f} ± {code.std(ddof=1):.3f} "
                                 f"({len(code)} seeds)")
            passing = [n for n, (status, _, _) in verdicts.items() if status == "pass"]
            closer = min(verdicts, key=lambda n: verdicts[n][1]) if verdicts else ""
            lands = ("both" if len(passing) == 2 else passing[0] if passing else "neither")
            out.append(checked(
                spec, paper=PAPER, item=f"{figure}, beta = {setting}: reassignment rule",
                quantity=f"mean distance ({split} clients), the authors' rule",
                reproduced=verdicts.get("authors' rule", (None, None, math.nan))[2],
                note=f"paper {value:.3f} ± {paper['paper_sd']:.3f}; " + "; ".join(parts),
                explanation=(f"on the paper's curve: {lands}; nearer: {closer}"
                             if verdicts else "neither sweep was run")))
    return out


def claims(tables: dict[str, pd.DataFrame], targets: dict) -> list[Claim]:
    """Every federated k-means claim from the gathered tables ``sweeps``, ``progress`` and
    ``real``, and ``authors`` (the authors' code at Fig 5's settings,
    ``benchmarks/results/fedkmeans_authors.csv``), each optional: a missing sweeps table gives
    every read value as not measured."""
    out = _real_claims(tables["real"], targets) if "real" in tables else []
    if "progress" in tables:
        out += _progress_claims(tables["progress"], targets)
    spec = target(targets, "fedkmeans", "sweeps")
    read = spec["read_from_figures"]
    table = tables.get("sweeps", pd.DataFrame(columns=["sweep", "varied", "setting", "seed",
                                                       "split", "metric", "value"]))
    # settings are names ("0.01", "central", "10"): a table read back with numbers only
    # (one sweep of E) keeps them as written
    table = table.assign(setting=table["setting"].astype(str))
    out += _read_claims(table, read)
    out += _statement_claims(table, spec, read["split"])
    out += _reassignment_claims(table, spec["reassignment"], read, tables.get("authors"))
    return out

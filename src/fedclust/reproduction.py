"""Reproduction checks: each reproduced number against the paper's, with its tolerance.

A :class:`Claim` is one number (or one inequality) a paper reports. Each experiment turns its
results table into claims; :func:`write_reproduction` gathers them into ``results/reproduction.csv``
and a readable ``results/reproduction.md``. The paper values and tolerances live in
``config/paper_targets.yaml``, each with its provenance.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from .io import atomic_path, write_table

__all__ = ["Claim", "load_targets", "claims_table", "gather_claims", "write_reproduction",
           "table1_claims", "separation_claims", "fig2_claims", "fig3_claims", "kfed_claims",
           "localkmeans_claims", "CLAIM_COLUMNS"]

CLAIM_COLUMNS = ("paper", "item", "quantity", "paper_value", "reproduced", "tolerance",
                 "comparison", "margin", "status", "provenance", "note")


@dataclass
class Claim:
    """One reproduced number.

    ``comparison`` is ``"abs_diff"`` (pass when ``|reproduced - paper_value| <= tolerance``),
    ``"at_least"`` / ``"at_most"`` (pass when ``reproduced`` is on the right side of
    ``paper_value`` by ``tolerance`` at most), or ``"reported"`` (no paper number to compare:
    listed, never failed). ``margin`` is how far inside the band the number is (negative when
    it fails).
    """

    paper: str
    item: str
    quantity: str
    reproduced: float
    paper_value: float = math.nan
    tolerance: float = math.nan
    comparison: str = "abs_diff"
    provenance: str = ""
    note: str = ""
    margin: float = field(init=False, default=math.nan)
    status: str = field(init=False, default="")

    def __post_init__(self):
        if self.comparison == "reported":
            self.status = "reported"
            return
        if self.comparison == "abs_diff":
            self.margin = self.tolerance - abs(self.reproduced - self.paper_value)
        elif self.comparison == "at_least":
            self.margin = self.reproduced - (self.paper_value - self.tolerance)
        elif self.comparison == "at_most":
            self.margin = (self.paper_value + self.tolerance) - self.reproduced
        else:
            raise ValueError(f"unknown comparison {self.comparison!r}")
        self.status = "pass" if self.margin >= 0 else "fail"


def load_targets(path) -> dict:
    """Read ``paper_targets.yaml``; raise naming the file when it is not a mapping."""
    path = Path(path)
    with open(path) as fh:
        targets = yaml.safe_load(fh)
    if not isinstance(targets, dict):
        raise ValueError(f"{path}: expected a mapping of papers to targets")
    return targets


def _target(targets: dict, *keys):
    node = targets
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise KeyError(f"paper targets: missing key {'.'.join(keys)}")
        node = node[key]
    return node


def _checked_claim(spec: dict, default_comparison: str, **fields) -> Claim:
    """A :class:`Claim` whose paper value, tolerance, comparison and provenance come from one
    target ``spec`` of ``paper_targets.yaml``."""
    return Claim(paper_value=float(spec["value"]), tolerance=float(spec["tolerance"]),
                 comparison=spec.get("comparison", default_comparison),
                 provenance=str(spec.get("provenance", "")), **fields)


def table1_claims(runs: pd.DataFrame, targets: dict) -> list[Claim]:
    """k-FED Table 1: every (d, k) row's mean accuracy within the tolerance of the paper's."""
    spec = _target(targets, "kfed", "table1")
    acc = runs[runs["metric"] == "accuracy"]
    claims = []
    for row in spec["rows"]:
        d, k = int(row["n_features"]), int(row["n_clusters"])
        sel = acc[(acc["n_features"] == d) & (acc["n_clusters"] == k)]["value"]
        if sel.empty:
            continue
        claims.append(Claim(
            paper="k-FED (Dennis et al. 2021)",
            item=f"Table 1, d={d}, k={k}",
            quantity=f"accuracy, mean of {len(sel)} runs (std {sel.std(ddof=1):.3f})"
            if len(sel) > 1 else "accuracy, 1 run",
            reproduced=float(sel.mean()),
            paper_value=float(row["value"]),
            tolerance=float(spec["tolerance"]),
            comparison="abs_diff",
            provenance=str(spec.get("provenance", "")),
        ))
    return claims


def separation_claims(summary: pd.DataFrame, targets: dict) -> list[Claim]:
    """k-FED Figure 5 / Appendix B.2: the chosen k and its share of pairs above ``c0``
    (reported, no paper number to compare against)."""
    spec = _target(targets, "kfed", "fig5")
    chosen = summary[summary["chosen"]].iloc[0]
    where = (f"{chosen['dataset']}, n={int(chosen['n_samples'])}, k'="
             f"{int(chosen['device_clusters'])}, m0={int(chosen['devices_per_cluster'])}")
    return [
        Claim(paper="k-FED (Dennis et al. 2021)", item=f"Fig 5 / B.2 ({where})",
              quantity="chosen k (largest share of pairs with c_rs > c0)",
              reproduced=float(chosen["n_clusters"]), comparison="reported",
              provenance=str(spec.get("provenance", ""))),
        Claim(paper="k-FED (Dennis et al. 2021)", item=f"Fig 5 / B.2 ({where})",
              quantity=f"share of pairs with c_rs > {chosen['threshold']:g} at the chosen k",
              reproduced=float(chosen["share_above"]), comparison="reported",
              provenance=str(spec.get("provenance", ""))),
    ]


def _mean_metric(runs: pd.DataFrame, metric: str) -> float:
    return float(runs.loc[runs["metric"] == metric, "value"].mean())


def fig2_claims(runs: pd.DataFrame, targets: dict) -> list[Claim]:
    """k-FED Figure 2: for ``k' <= sqrt(k)`` (and ``k' < k``), structured partitions bring
    k-FED closer to the oracle than IID ones: ``(mean phi - phi*) / (mean phi~ - phi*)``
    is at most the target (1), per data set."""
    spec = _target(targets, "kfed", "fig2")
    claims = []
    for ds, sub in runs.groupby("dataset", sort=True):
        k = int(sub["n_clusters"].iloc[0])
        small = sub[(sub["device_clusters"] <= math.sqrt(k)) & (sub["device_clusters"] < k)]
        if small.empty:
            continue
        oracle = _mean_metric(small, "oracle_cost")
        gap_structured = _mean_metric(small, "structured_cost") - oracle
        gap_iid = _mean_metric(small, "iid_cost") - oracle
        ratio = gap_structured / gap_iid if gap_iid > 0 else math.inf
        kps = sorted(int(v) for v in small["device_clusters"].unique())
        claims.append(_checked_claim(
            spec, "at_most", paper="k-FED (Dennis et al. 2021)",
            item=f"Fig 2, {ds} (oracle k={k}, k' in {kps})",
            quantity="(phi - phi*) / (phi~ - phi*), structured over IID cost gap",
            reproduced=ratio,
            note=f"runs={small['run'].nunique()}; mean gaps {gap_structured:.4g} vs "
                 f"{gap_iid:.4g}"))
    return claims


def fig3_claims(runs: pd.DataFrame, targets: dict) -> list[Claim]:
    """k-FED Figure 3: k-FED's k-means cost is close to naive distributed k-means' (ratio of
    mean costs at most ``1 + tolerance``), per data set and oracle k, with one round instead
    of many."""
    spec = _target(targets, "kfed", "fig3")
    claims = []
    for (ds, k), sub in runs.groupby(["dataset", "n_clusters"], sort=True):
        kfed = sub[sub["algorithm"] == "k-FED"]
        naive = sub[sub["algorithm"] == "distributed Lloyd"]
        if kfed.empty or naive.empty:
            continue
        ratio = _mean_metric(kfed, "cost") / _mean_metric(naive, "cost")
        kps = sorted(int(v) for v in sub["device_clusters"].unique())
        claims.append(_checked_claim(
            spec, "at_most", paper="k-FED (Dennis et al. 2021)",
            item=f"Fig 3, {ds} (oracle k={int(k)}, k' in {kps})",
            quantity="k-FED cost / naive distributed k-means cost",
            reproduced=ratio,
            note=f"rounds: k-FED {_mean_metric(kfed, 'rounds'):.0f}, naive "
                 f"{_mean_metric(naive, 'rounds'):.1f}"))
    return claims


def _final_misclustering(runs: pd.DataFrame) -> pd.Series:
    """Mean over trials of the misclustering after the last iteration, per ``local_steps``."""
    final = runs[(runs["metric"] == "misclustering") & (runs["iteration"] == runs["n_iter"])]
    return final.groupby("local_steps")["value"].mean()


def _few_steps(labels) -> str | None:
    """The smallest ``L > 1`` among the labels ``L=...``."""
    values = sorted(int(v.split("=")[1]) for v in labels if v.startswith("L=") and v != "L=1")
    return f"L={values[0]}" if values else None


def kfed_claims(tables: dict[str, pd.DataFrame], targets: dict) -> list[Claim]:
    """Every k-FED claim from its tables: ``table1``, ``separation/<dataset>`` (summaries),
    ``fig2`` and ``fig3`` (each optional)."""
    claims = table1_claims(tables["table1"], targets) if "table1" in tables else []
    for name in sorted(t for t in tables if t.startswith("separation/")):
        claims += separation_claims(tables[name], targets)
    if "fig2" in tables:
        claims += fig2_claims(tables["fig2"], targets)
    if "fig3" in tables:
        claims += fig3_claims(tables["fig3"], targets)
    return claims


def localkmeans_claims(tables: dict[str, pd.DataFrame], targets: dict) -> list[Claim]:
    """LocalKMeans on real data (Figs 2, 3), per data set of ``tables["real"]`` (none without
    it): (1) no aggregation ends with the highest misclustering of all ``L``; (2) with a few
    aggregations (the smallest ``L > 1``) the final misclustering is within the tolerance of
    centralized Lloyd's (``L = 1``)."""
    if "real" not in tables:
        return []
    runs = tables["real"]
    worst = _target(targets, "localkmeans", "no_aggregation_worst")
    close = _target(targets, "localkmeans", "few_aggregations_close")
    paper = "LocalKMeans (Vardhan et al. 2025)"
    claims = []
    for ds, sub in runs.groupby("dataset", sort=True):
        final = _final_misclustering(sub)
        trials = sub["trial"].nunique()
        if "no aggregation" in final.index and len(final) > 1:
            others = final.drop("no aggregation")
            claims.append(_checked_claim(
                worst, "at_least", paper=paper, item=f"Figs 2-3, {ds}",
                quantity="final misclustering: no aggregation minus the highest with "
                         "aggregation", reproduced=float(final["no aggregation"] - others.max()),
                note=f"{trials} trials; no aggregation {final['no aggregation']:.4f}, worst "
                     f"other {others.idxmax()} {others.max():.4f}"))
        few = _few_steps(final.index)
        if few and "L=1" in final.index:
            claims.append(_checked_claim(
                close, "at_most", paper=paper, item=f"Figs 2-3, {ds}",
                quantity=f"final misclustering: {few} minus centralized Lloyd (L=1)",
                reproduced=float(final[few] - final["L=1"]),
                note=f"{trials} trials; {few} {final[few]:.4f}, L=1 {final['L=1']:.4f}"))
    return claims


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """Claims as a table with the columns :data:`CLAIM_COLUMNS`."""
    records = [asdict(c) for c in claims]
    return pd.DataFrame.from_records(records, columns=list(CLAIM_COLUMNS))


def gather_claims(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Every paper's claims tables in one (an empty table with the claim columns if none)."""
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=list(CLAIM_COLUMNS))
    return pd.concat(tables, ignore_index=True)


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x).replace("|", "\\|")  # a bare "|" would end the Markdown cell


def write_reproduction(table: pd.DataFrame, csv_path, md_path, *, profile: str = "") -> None:
    """Write the gathered claims as CSV and as a Markdown report."""
    write_table(table, csv_path)
    counts = table["status"].value_counts()
    lines = [
        "# Reproduction report",
        "",
        f"Profile: {profile or 'unknown'}. "
        f"{counts.get('pass', 0)} pass, {counts.get('fail', 0)} fail, "
        f"{counts.get('reported', 0)} reported without a paper number to compare.",
        "",
        "| paper | item | quantity | check | paper | reproduced | tolerance | margin | status |"
        " note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    # no "|" inside a cell: it would end the cell and shift the columns of the row
    checks = {"abs_diff": "abs(r - p) <= tol", "at_most": "r <= p + tol",
              "at_least": "r >= p - tol", "reported": ""}
    for row in table.itertuples():
        lines.append(f"| {_fmt(row.paper)} | {_fmt(row.item)} | {_fmt(row.quantity)} | "
                     f"{checks[row.comparison]} | "
                     f"{_fmt(row.paper_value)} | {_fmt(row.reproduced)} | {_fmt(row.tolerance)} "
                     f"| {_fmt(row.margin)} | **{row.status}** | {_fmt(row.note)} |")
    provenance = table[["paper", "provenance"]].drop_duplicates()
    provenance = provenance[provenance["provenance"].astype(str).str.len() > 0]
    if not provenance.empty:
        lines += ["", "## Where the paper values come from", ""]
        seen = set()
        for row in provenance.itertuples():
            if row.provenance not in seen:
                seen.add(row.provenance)
                lines.append(f"- {row.paper}: {row.provenance}")
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text("\n".join(lines) + "\n")

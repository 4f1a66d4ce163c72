"""Reproduction checks: each reproduced number against the paper's, with its tolerance.

A :class:`Claim` is one number (or one inequality) a paper prints about its experiments, with
where it is printed. Each paper's claims are computed from its results tables by
:mod:`fedclust.claims` (one module per paper); :func:`write_reproduction` gathers them into
``results/reproduction.csv`` and a readable ``results/reproduction.md``. The paper values,
tolerances and provenance live in ``config/paper_targets.yaml``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from .io import atomic_path, write_table

__all__ = ["Claim", "load_targets", "target", "checked", "claims_table", "gather_claims",
           "write_reproduction", "CLAIM_COLUMNS", "COMPARISONS"]

CLAIM_COLUMNS = ("paper", "where", "item", "quantity", "paper_value", "reproduced",
                 "tolerance", "comparison", "margin", "status", "provenance", "note",
                 "explanation")

#: How a reproduced number ``r`` is held against the paper's ``p`` (the report's check column).
COMPARISONS = {"abs_diff": "abs(r - p) <= tol", "at_most": "r <= p + tol",
               "at_least": "r >= p - tol", "reported": "", "deviation": "", "not_run": ""}


@dataclass
class Claim:
    """One reproduced number.

    ``comparison`` is ``"abs_diff"`` (pass when ``|reproduced - paper_value| <= tolerance``),
    ``"at_least"`` / ``"at_most"`` (pass when ``reproduced`` is on the right side of
    ``paper_value`` by ``tolerance`` at most), ``"reported"`` (no paper number to compare:
    listed, never failed), ``"deviation"`` (a printed number this pipeline knowingly cannot
    match, e.g. data the offline mirror does not hold; ``note`` says why) or ``"not_run"``
    (printed, not reproduced by this pipeline yet; ``note`` says what is missing). ``margin`` is
    how far inside the band the number is (negative when it fails). ``where`` is where the
    paper prints it (table, figure, section).

    ``explanation`` (``why_ours_differs`` in the targets) is a known, stated reason why this
    pipeline's setting can land on the other side of a check: a failing check with an
    explanation has status ``"contradicts"`` (reported, explained in the figure's caption),
    one without has status ``"fail"``. A passing check is ``"pass"`` either way.
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
    where: str = ""
    explanation: str = ""
    margin: float = field(init=False, default=math.nan)
    status: str = field(init=False, default="")

    def __post_init__(self):
        if self.comparison in ("reported", "deviation", "not_run"):
            self.status = {"not_run": "not run"}.get(self.comparison, self.comparison)
            return
        if self.comparison == "abs_diff":
            self.margin = self.tolerance - abs(self.reproduced - self.paper_value)
        elif self.comparison == "at_least":
            self.margin = self.reproduced - (self.paper_value - self.tolerance)
        elif self.comparison == "at_most":
            self.margin = (self.paper_value + self.tolerance) - self.reproduced
        else:
            raise ValueError(f"unknown comparison {self.comparison!r}")
        # printed values carry a few decimals: a margin of -1e-12 is rounding, not a failure
        if self.margin >= -1e-12:
            self.status = "pass"
        else:
            self.status = "contradicts" if self.explanation else "fail"


def load_targets(path) -> dict:
    """Read ``paper_targets.yaml``; raise naming the file when it is not a mapping."""
    path = Path(path)
    with open(path) as fh:
        targets = yaml.safe_load(fh)
    if not isinstance(targets, dict):
        raise ValueError(f"{path}: expected a mapping of papers to targets")
    return targets


def target(targets: dict, *keys):
    node = targets
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise KeyError(f"paper targets: missing key {'.'.join(keys)}")
        node = node[key]
    return node


def checked(spec: dict, **fields) -> Claim:
    """A :class:`Claim` whose paper value, tolerance, comparison, provenance, place in the
    paper and known reason to differ come from one target ``spec`` of ``paper_targets.yaml``
    (``value``, ``tolerance``, ``comparison``, ``provenance``, ``where``, ``why_ours_differs``);
    ``fields`` give the rest."""
    params = {"paper_value": float(spec["value"]), "tolerance": float(spec["tolerance"]),
              "comparison": spec["comparison"], "provenance": str(spec.get("provenance", "")),
              "where": str(spec.get("where", "")),
              "explanation": str(spec.get("why_ours_differs", "")), **fields}
    return Claim(**params)


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
        f"{counts.get('contradicts', 0)} contradict the paper for a stated reason (listed "
        f"below, and in the figures' captions), "
        f"{counts.get('reported', 0)} reported without a paper number to compare, "
        f"{counts.get('deviation', 0)} stated deviations (data or numbers this pipeline cannot "
        f"match, each with its reason), {counts.get('not run', 0)} printed but not run yet.",
        "",
        "| paper | printed in | item | quantity | check | paper | reproduced | tolerance | margin "
        "| status | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples():
        lines.append(f"| {_fmt(row.paper)} | {_fmt(row.where)} | {_fmt(row.item)} | "
                     f"{_fmt(row.quantity)} | {COMPARISONS[row.comparison]} | "
                     f"{_fmt(row.paper_value)} | {_fmt(row.reproduced)} | {_fmt(row.tolerance)} "
                     f"| {_fmt(row.margin)} | **{row.status}** | {_fmt(row.note)} |")
    contradicting = table[table["status"] == "contradicts"]
    if not contradicting.empty:
        lines += ["", "## Where this run contradicts the paper, and why", ""]
        for row in contradicting.itertuples():
            lines.append(f"- {row.paper}, {row.item} ({row.quantity}): "
                         f"{row.explanation}")
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

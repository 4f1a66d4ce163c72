"""Reproduction checks: each reproduced number against the paper's, with its verdict.

A :class:`Claim` is one number (or one inequality) a paper prints about its experiments, with
where it is printed. Each paper's claims are computed from its results tables by its ``claims``
module (:mod:`fedclust.papers.kfed.claims`, ...); :func:`write_reproduction` gathers them into
``results/reproduction.csv`` and a readable ``results/reproduction.md``. The paper values,
tolerances and provenance live in ``config/paper_targets.yaml``. Every row is one declared
statistical test of :mod:`fedclust.verdicts`, which uses both sides' spread, and gets one of
:data:`VERDICTS` (their meanings: ``docs/reproduction.md``); a row whose setup differs from the
paper's keeps its test's verdict and names the stand-in in ``stand_in``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from . import verdicts
from .io import SKIPPED, atomic_path, write_table

__all__ = ["Claim", "Target", "load_targets", "target", "target_keys", "checked",
           "bootstrap_spread", "deciding",
           "claims_table", "gather_claims", "declare_profile", "name_stand_ins", "run_spread",
           "skipped_claims",
           "write_reproduction", "expectation", "verdict_changes", "definition_changes",
           "CLAIM_COLUMNS", "DEFINITION_COLUMNS",
           "COMPARISONS", "VERDICTS", "VERDICT_KEY"]

CLAIM_COLUMNS = ("paper", "key", "where", "item", "quantity", "paper_value", "paper_high",
                 "paper_sd", "n_paper", "reproduced", "ours_sd", "ours_se", "n_ours", "tolerance",
                 "comparison", "test", "statistic", "band", "margin", "within_band", "status",
                 "stand_in", "provenance", "note", "test_detail", "explanation")

#: The verdicts, in the order the report counts them.
VERDICTS = ("pass", "fail", "not shown", "not at this profile", "by construction", "reported")

#: The columns that name one row of the report across runs (the verdict expectation's key).
VERDICT_KEY = ("key", "item", "quantity")

#: The columns that define a row's test and the paper's side of it (not our numbers): a
#: published report whose rows differ here from the code's is stale.
DEFINITION_COLUMNS = ("comparison", "test", "paper_value", "paper_high", "paper_sd", "n_paper",
                      "tolerance")

#: How a reproduced number ``r`` is held against the paper's ``p`` (the report's check
#: column) and the test of :mod:`fedclust.verdicts` that decides it.
COMPARISONS = {"abs_diff": "r = p", "equivalent": "|r - p| <= tol",
               "at_least": "r >= p - tol", "at_most": "r <= p + tol",
               "between": "p <= r <= p_high", "reported": ""}
_TEST_OF = {"abs_diff": "same_value", "equivalent": "equivalent", "at_least": "at_least",
            "at_most": "at_most", "between": "in_range"}


class Target(dict):
    """One node of ``paper_targets.yaml``: a mapping that knows its dotted path (``key``), so
    that a claim made from it can be named and declared across runs."""

    key: str = ""


def _number(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


@dataclass
class Claim:
    """One reproduced number, the statistical test that holds it against the paper's, and its
    verdict (:data:`VERDICTS`).

    ``comparison`` names the test (:mod:`fedclust.verdicts`): ``"abs_diff"``
    (:func:`~fedclust.verdicts.same_value`: our mean against the paper's, ``tolerance`` the
    reading error of the paper's number), ``"equivalent"`` (two one-sided tests of
    ``reproduced`` around ``paper_value`` with margin ``tolerance``), ``"at_least"`` /
    ``"at_most"`` (one-sided tests against ``paper_value`` -/+ ``tolerance``), ``"between"``
    (a printed range ``paper_value``..``paper_high``, both ends) or ``"reported"`` (no printed
    number: listed, never judged). Each side's spread is its run-to-run standard deviation
    and run count: ``ours_sd``/``n_ours`` for ``reproduced`` (of paired differences where it
    is one; ``ours_se``, a bootstrap standard error over the ``n_ours`` runs, where
    ``reproduced`` is not a mean over runs), ``paper_sd``/``n_paper`` for ``paper_value``;
    NaN where a side gives none (the tests' stand-in rule then applies). ``statistic``,
    ``band`` and ``test_detail`` are the test's; ``margin`` is how far inside the pass
    region the interval is (negative outside, NaN when nothing was measured);
    ``within_band`` says whether the test passed.

    ``key`` is the target's dotted path in ``paper_targets.yaml``; ``where`` is where the paper
    prints it. ``deviation`` (a reason: stand-in data, a value our copy cannot show) is kept
    in ``stand_in`` beside the verdict; ``by_construction`` (a reason) makes a passing check
    ``"by construction"``. ``explanation`` is why our number lands where it does: shown beside
    every row that does not pass, it never changes a verdict. A ``reproduced`` of NaN (a
    setting the run did not measure) is a ``"fail"`` unless declared.
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
    key: str = ""
    paper_high: float = math.nan
    deviation: str = ""
    by_construction: str = ""
    ours_sd: float = math.nan
    ours_se: float = math.nan
    n_ours: float = math.nan
    paper_sd: float = math.nan
    n_paper: float = math.nan
    test: str = field(init=False, default="")
    statistic: float = field(init=False, default=math.nan)
    band: float = field(init=False, default=math.nan)
    test_detail: str = field(init=False, default="")
    stand_in: str = field(init=False, default="")
    margin: float = field(init=False, default=math.nan)
    within_band: object = field(init=False, default=None)
    status: str = field(init=False, default="")

    def __post_init__(self):
        if self.comparison not in COMPARISONS:
            raise ValueError(f"unknown comparison {self.comparison!r}; expected one of "
                             f"{sorted(COMPARISONS)}")
        self.stand_in = _reason(self.deviation)
        if self.comparison == "reported":
            self.status = "reported"
            return
        ours = verdicts.Spread(_number(self.reproduced), _number(self.ours_sd),
                               _number(self.n_ours), "our runs", se=_number(self.ours_se))
        p, tol = _number(self.paper_value), _number(self.tolerance)
        tol = 0.0 if math.isnan(tol) else tol
        self.test = _TEST_OF[self.comparison]
        if self.comparison == "abs_diff":
            paper = verdicts.Spread(p, _number(self.paper_sd), _number(self.n_paper),
                                    "the paper")
            outcome = verdicts.same_value(ours, paper, tol)
            self.margin = outcome.band - abs(outcome.statistic)
        elif self.comparison == "equivalent":
            outcome = verdicts.equivalent(ours, tol, centre=p)
            self.margin = tol - max(abs(outcome.low), abs(outcome.high))
        elif self.comparison == "at_least":
            outcome = verdicts.at_least(ours, p - tol)
            self.margin = outcome.low - (p - tol)
        elif self.comparison == "at_most":
            outcome = verdicts.at_most(ours, p + tol)
            self.margin = (p + tol) - outcome.high
        else:  # between
            high = _number(self.paper_high)
            outcome = verdicts.in_range(ours, p, high)
            self.margin = min(ours.mean - p, high - ours.mean)
        self.statistic, self.band, self.test_detail = (outcome.statistic, outcome.band,
                                                       outcome.detail)
        self.within_band = outcome.verdict == "pass"
        if outcome.verdict == "pass" and self.by_construction:
            self.status = "by construction"
            self.explanation = self.by_construction
        else:
            self.status = outcome.verdict


def run_spread(values) -> dict:
    """``ours_sd`` and ``n_ours`` of a statistic measured run by run (or trial by trial; paired
    differences where a row compares two settings on shared seeds), NaNs dropped: the Claim
    fields a row's test reads (:meth:`fedclust.verdicts.Spread.of`)."""
    spread = verdicts.Spread.of(values)
    return {"ours_sd": spread.sd, "n_ours": spread.n}


def bootstrap_spread(values, statistic) -> dict:
    """``ours_se`` and ``n_ours`` of a statistic of our runs that is not their mean
    (:func:`fedclust.verdicts.bootstrap`; ``values`` one row per run, a run's settings in its
    columns): the Claim fields a row's test reads."""
    spread = verdicts.bootstrap(values, statistic)
    return {"ours_se": spread.se, "n_ours": spread.n}


def deciding(claims: list[Claim]) -> Claim:
    """Of one statement's claims, one per setting ("at every k", "in all cases"), the one
    that decides it (an intersection-union test): a failing one if any fails, else one not
    shown, else the passing one nearest its band; the farthest outside (or nearest the edge)
    within a verdict. The statement's verdict is that claim's."""
    if not claims:
        raise ValueError("no claim to decide on")
    order = {"fail": 0, "not shown": 1}

    def rank(claim):
        margin = claim.margin if not math.isnan(claim.margin) else -math.inf
        return (order.get(claim.status, 2), margin)
    return min(claims, key=rank)


def _as_targets(node, path: str = ""):
    if isinstance(node, dict):
        out = Target((k, _as_targets(v, f"{path}.{k}" if path else str(k)))
                     for k, v in node.items())
        out.key = path
        return out
    if isinstance(node, list):
        return [_as_targets(v, path) for v in node]
    return node


#: libyaml's parser where PyYAML has it (the same documents, several times faster to read)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=8)
def _parsed(path: str, mtime_ns: int, size: int):
    """The YAML document at ``path``, read once per version of the file (its modification
    time and size): Snakemake asks for the targets once per figure caption while it builds
    the DAG."""
    with open(path) as fh:
        return yaml.load(fh, Loader=_SAFE_LOADER)


def load_targets(path) -> dict:
    """Read ``paper_targets.yaml`` into :class:`Target` nodes (each knows its dotted path);
    raise naming the file when it is not a mapping. Every call returns its own nodes."""
    path = Path(path)
    stat = path.stat()
    targets = _parsed(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if not isinstance(targets, dict):
        raise ValueError(f"{path}: expected a mapping of papers to targets")
    return _as_targets(targets)


def target(targets: dict, *keys):
    node = targets
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise KeyError(f"paper targets: missing key {'.'.join(keys)}")
        node = node[key]
    return node


def target_keys(targets: dict) -> set[str]:
    """The dotted path of every mapping in the targets (what a profile may declare)."""
    keys = set()

    def walk(node, path):
        if isinstance(node, dict):
            if path:
                keys.add(path)
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else str(k))
    walk(targets, "")
    return keys


def _reason(text) -> str:
    return " ".join(str(text or "").split())


def checked(spec: dict, **fields) -> Claim:
    """A :class:`Claim` whose paper value, tolerance, comparison, provenance, place in the
    paper, key and stated reasons come from one target ``spec`` of ``paper_targets.yaml``
    (``value``, ``high`` for a range, ``sd`` and ``runs`` for the paper's spread,
    ``tolerance``, ``comparison``, ``provenance``, ``where``,
    ``why_ours_differs``, ``deviation``, ``by_construction``); ``fields`` give the rest and
    override, but a measured ``explanation`` (a ``deviation``) is joined to the target's
    stated one, not put in its place. A plain dict built from a target (``{**spec, "value":
    v}``) keeps its key only if ``key=`` is given."""
    params = {"paper_value": float(spec.get("value", math.nan)),
              "paper_high": float(spec.get("high", math.nan)),
              "paper_sd": float(spec.get("sd", math.nan)),
              "n_paper": float(spec.get("runs", math.nan)),
              "tolerance": float(spec.get("tolerance", math.nan)),
              "comparison": spec["comparison"], "provenance": _reason(spec.get("provenance")),
              "where": str(spec.get("where", "")),
              "by_construction": _reason(spec.get("by_construction")),
              "key": getattr(spec, "key", ""), **fields}
    # a measured reason given by the claim comes first, the target's stated one after it;
    # a deviation of the run (its data) joins the target's own (a value our copy lacks)
    for field_name, spec_name in (("explanation", "why_ours_differs"),
                                  ("deviation", "deviation")):
        params[field_name] = "; ".join(t for t in (fields.get(field_name),
                                                   _reason(spec.get(spec_name))) if t)
    return Claim(**params)


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """Claims as a table with the columns :data:`CLAIM_COLUMNS`; a row that does not pass and
    states no reason gets what its test measured as one."""
    records = [asdict(c) for c in claims]
    for record in records:
        if record["status"] not in ("pass", "reported") and not record["explanation"] \
                and record["test_detail"]:
            # a row that does not pass always says why: at least what its test measured
            record["explanation"] = f"the test measured {record['test_detail']}"
    return pd.DataFrame.from_records(records, columns=list(CLAIM_COLUMNS))


def gather_claims(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Every paper's claims tables in one (an empty table with the claim columns if none)."""
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=list(CLAIM_COLUMNS))
    return pd.concat(tables, ignore_index=True)


#: Columns of a results table that name a run, not a setting.
_RUN_COLUMNS = ("run", "seed", "trial", "metric", "value", "reason", "data_title")


def skipped_claims(paper: str, key: str, tables: dict[str, pd.DataFrame]) -> list[Claim]:
    """One ``reported`` row per setting an experiment could not run (metric ``skipped`` in
    its results table: an impossible setting, never a silent NaN), its runs and reason in the
    note, so that no skipped setting is absent from the report."""
    out = []
    for name, table in sorted(tables.items()):
        if "metric" not in table.columns or "reason" not in table.columns:
            continue
        rows = table[table["metric"] == SKIPPED]
        ids = [c for c in rows.columns if c not in _RUN_COLUMNS]
        for setting, part in rows.groupby(ids, sort=True, dropna=False) if ids else ():
            values = setting if isinstance(setting, tuple) else (setting,)
            named = ", ".join(f"{c}={v}" for c, v in zip(ids, values, strict=True)
                              if not (isinstance(v, float) and math.isnan(v)))
            runs = sorted(part["run"].unique().tolist()) if "run" in part.columns else []
            reasons = "; ".join(dict.fromkeys(part["reason"].astype(str)))
            out.append(Claim(paper=paper, key=f"{key}.skipped", item=f"{name}: {named}",
                             quantity="setting skipped (cannot run)", reproduced=math.nan,
                             comparison="reported",
                             note=f"runs {runs}: {reasons}" if runs else reasons,
                             explanation=reasons))
    return out


def _declared_for(key: str, declared: dict) -> str | None:
    """The declaration covering target ``key`` (itself or its nearest enclosing section)."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        reason = declared.get(".".join(parts[:end]))
        if reason:
            return reason
    return None


def name_stand_ins(claims: list[Claim], stand_ins) -> list[Claim]:
    """Add each ``(target key, item text, reason)`` of ``stand_ins`` to the ``stand_in`` of
    the claims under that key whose item contains the text: a setup of the run that is not
    the paper's qualifies the row; its verdict stays the test's."""
    for key, item, reason in stand_ins or ():
        for claim in claims:
            if claim.key and _declared_for(claim.key, {key: True}) and item in claim.item:
                claim.stand_in = "; ".join(t for t in (claim.stand_in, _reason(reason)) if t)
    return claims


def declare_profile(claims: list[Claim], declared: dict[str, str]) -> list[Claim]:
    """Mark the claims under a target the profile declared scale-limited (``{target key:
    reason}``, written in the config before the run) ``"not at this profile"``, the reason
    beside the measured one. A by-construction or reported row keeps its verdict: scale does
    not change an identity."""
    for claim in claims:
        reason = _declared_for(claim.key, declared or {}) if claim.key else None
        if reason and claim.status in ("pass", "fail", "not shown"):
            side = "not measured" if math.isnan(claim.margin) else f"the test: {claim.status}"
            claim.explanation = "; ".join(t for t in (
                f"declared for this profile: {_reason(reason)} ({side})",
                claim.explanation) if t)
            claim.status = "not at this profile"
    return claims


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells as they read back from CSV: a missing value as "", a number as ``repr`` of its
    float (a whole count without ".0")."""
    def text(x):
        if x is None or (isinstance(x, float) and math.isnan(x)) or x == "":
            return ""
        if isinstance(x, (bool, str)):
            return str(x)
        try:
            value = float(x)
        except (TypeError, ValueError):
            return str(x)
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return frame.astype(object).map(text)


def expectation(table: pd.DataFrame) -> pd.DataFrame:
    """The verdict and the definition of every row (:data:`VERDICT_KEY`, ``status`` and
    :data:`DEFINITION_COLUMNS`: the test and the paper's side of it), sorted: what
    ``tests/data/quick_verdicts.csv`` holds for the quick profile."""
    columns = [*VERDICT_KEY, "status", *(c for c in DEFINITION_COLUMNS if c in table.columns)]
    out = _as_text(table[columns])
    return out.sort_values(list(VERDICT_KEY), kind="stable").reset_index(drop=True)


def definition_changes(table: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    """Rows present in both whose definition (:data:`DEFINITION_COLUMNS` that both hold: the
    test, the paper's value, range, spread, run count, tolerance) differs, the two sides'
    values beside each other: what moved in a target or a test since ``expected``."""
    key = list(VERDICT_KEY)
    columns = [c for c in DEFINITION_COLUMNS if c in table.columns and c in expected.columns]
    now, was = _as_text(table[key + columns]), _as_text(expected[key + columns])
    merged = was.merge(now, on=key, how="inner", suffixes=("_expected", "_now"))
    changed = pd.Series(False, index=merged.index)
    for column in columns:
        changed |= merged[f"{column}_expected"] != merged[f"{column}_now"]
    return merged[changed].reset_index(drop=True)


def verdict_changes(table: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    """Rows whose verdict differs from ``expected`` (columns :data:`VERDICT_KEY` + ``status``),
    in either direction, with rows that appeared or disappeared (``status`` NaN on the side
    that lacks them). Empty when every verdict is as expected."""
    key = list(VERDICT_KEY)
    now, was = expectation(table), expectation(expected)
    for frame, name in ((now, "this run"), (was, "the expectation")):
        dup = frame[frame.duplicated(key, keep=False)]
        if not dup.empty:
            raise ValueError(f"{name}: {len(dup)} rows share a (key, item, quantity): "
                             f"{dup.iloc[0][key].tolist()}")
    merged = was.merge(now, on=key, how="outer", suffixes=("_expected", "_now"))
    changed = merged["status_expected"].fillna("") != merged["status_now"].fillna("")
    return merged[changed].reset_index(drop=True)


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, (bool,)):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x).replace("|", "\\|")  # a bare "|" would end the Markdown cell


def _check(row) -> str:
    if row.comparison == "between":
        return f"{_fmt(row.paper_value)} <= r <= {_fmt(row.paper_high)}"
    return _fmt(COMPARISONS[row.comparison])  # "|r - p| <= tol": escaped as any cell


def _runs(sd, n, se=math.nan) -> str:
    """``n`` and ``± sd`` of one side, or its bootstrap ``se`` ("" when none is given)."""
    n_text = "" if n is None or (isinstance(n, float) and math.isnan(n)) else f"{int(n)}"
    sd_text, se_text = _fmt(sd), _fmt(se)
    if se_text and not sd_text:
        return f"{n_text} (se {se_text}, bootstrap)"
    return f"{n_text}" + (f" (±{sd_text})" if sd_text else "")


_HEADINGS = {
    "fail": "Fails, with the measured reason",
    "not shown": "Not shown: the runs cannot resolve the statement",
    "not at this profile": "Not at this profile (declared in the config before the run)",
    "by construction": "Passes by construction (not counted as reproductions)",
}


def write_reproduction(table: pd.DataFrame, csv_path, md_path, *, profile: str = "",
                       declared: dict | None = None) -> None:
    """Write the gathered claims as CSV and as a Markdown report: the verdict counts (and
    those of the rows on stand-in data), the tests (*Methods*), the table, every row that does
    not pass with its reason, and where the values come from. ``declared`` (the profile's
    declarations) lists those that matched no row."""
    write_table(table, csv_path)
    counts = table["status"].value_counts()
    judged = sum(int(counts.get(v, 0)) for v in ("pass", "fail", "not shown"))
    stand_in = (table["stand_in"].astype(object).fillna("").astype(str).str.len() > 0
                if "stand_in" in table.columns else pd.Series(False, index=table.index))
    stand_counts = table[stand_in]["status"].value_counts()
    lines = [
        "# Reproduction report",
        "",
        f"Profile: {profile or 'unknown'}. {len(table)} rows: "
        + ", ".join(f"**{int(counts.get(v, 0))} {v}**" for v in VERDICTS) + ".",
        "",
        f"Reproductions tested against the paper: {int(counts.get('pass', 0))} of {judged} "
        f"pass. Of all rows, {int(stand_in.sum())} are on stand-in data or a setup that "
        "differs from the paper's: "
        + ", ".join(f"{int(stand_counts.get(v, 0))} {v}" for v in VERDICTS
                    if stand_counts.get(v, 0)) + ("." if stand_in.any() else "none."),
        "",
        "## Methods",
        "",
        *verdicts.methods_text(),
        "",
        "Columns: *paper n (±sd)* and *ours n (±sd)* are each side's run count and "
        "run-to-run standard deviation (blank: not given; the stand-in rule applies), or "
        "*se ..., bootstrap*, the bootstrap standard error of a statistic that is not a mean; "
        "*statistic* is the tested estimate (ours - paper, or the estimate against its "
        "threshold) and *band* the half-width it was held to; *stand-in* names data or a "
        "setup that is not the paper's.",
        "",
        "## Rows",
        "",
        "| paper | printed in | item | quantity | check | paper | paper n (±sd) | reproduced "
        "| ours n (±sd) | test | statistic | band | verdict | stand-in | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples():
        lines.append(f"| {_fmt(row.paper)} | {_fmt(row.where)} | {_fmt(row.item)} | "
                     f"{_fmt(row.quantity)} | {_check(row)} | {_fmt(row.paper_value)} | "
                     f"{_runs(row.paper_sd, row.n_paper)} | {_fmt(row.reproduced)} | "
                     f"{_runs(row.ours_sd, row.n_ours, getattr(row, 'ours_se', math.nan))} | "
                     f"{_fmt(row.test)} | "
                     f"{_fmt(row.statistic)} | {_fmt(row.band)} | **{row.status}** | "
                     f"{_fmt(row.stand_in)} | {_fmt(row.note)} |")
    for verdict, heading in _HEADINGS.items():
        rows = table[table["status"] == verdict]
        if rows.empty:
            continue
        lines += ["", f"## {heading}", ""]
        for row in rows.itertuples():
            measured = f" Measured: {row.note}." if _fmt(row.note) else ""
            tested = f" Test: {row.test_detail}." if _fmt(row.test_detail) else ""
            reason = _fmt(row.explanation) or "no reason stated"
            lines.append(f"- {row.paper}, {row.item} ({row.quantity}): {reason}."
                         f"{tested}{measured}")
    rows = table[stand_in]
    if not rows.empty:
        lines += ["", "## Rows on stand-in data or a setup that differs from the paper's", ""]
        for row in rows.itertuples():
            lines.append(f"- {row.paper}, {row.item} ({row.quantity}): **{row.status}**; "
                         f"{_fmt(row.stand_in)}.")
    keys = set(table["key"].dropna().astype(str))
    unused = sorted(k for k in (declared or {})
                    if not any(_declared_for(key, {k: True}) for key in keys))
    if unused:
        lines += ["", "## Declarations that matched no row", ""]
        lines += [f"- `{k}`: {_reason(declared[k])}" for k in unused]
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

"""The statistical tests behind every verdict of the reproduction report.

Each reproduced row compares one side of runs with what a paper prints: a value with its
spread (a printed ± standard deviation, a figure's ±1 std shading, a stated run count), a
statement's threshold, an equivalence margin or a range. Every side is a :class:`Spread` (a
mean, its run-to-run standard deviation and its run count); every test is one function below,
its docstring the rule the report's *Methods* section prints, all at one confidence level,
:data:`LEVEL`. A test sees only declared inputs -- the paper's numbers, spreads and run counts,
the reading error of a number read off a figure, and our runs' mean, spread and count -- and
no band is ever computed from a mean. Verdicts: ``pass`` (the paper's statement holds at the
level), ``fail`` (its contrary is shown), ``not shown`` (the runs cannot resolve it).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["LEVEL", "BOOTSTRAP_RESAMPLES", "Spread", "Outcome", "bootstrap", "same_value",
           "equivalent", "at_least", "at_most", "in_range", "TESTS", "methods_text"]

#: One confidence level for the whole report: two-sided tests at 1 - LEVEL, one-sided ones
#: (orderings, each half of an equivalence) at the same 1 - LEVEL per side.
LEVEL = 0.95

#: Resamples of :func:`bootstrap` (a fixed seed: a rerun gives the same bytes).
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Spread:
    """One side of a comparison: a mean, its run-to-run standard deviation and its run count.

    ``sd`` and ``n`` are NaN where that side does not give them (a paper that prints one
    number, a single deterministic measure); ``source`` says where the spread comes from.
    ``se``, where given, is the standard error of ``mean`` itself (a statistic that is not
    a mean over runs, its error from :func:`bootstrap` over ``n`` runs); it replaces
    ``sd / sqrt(n)``.
    """

    mean: float
    sd: float = math.nan
    n: float = math.nan
    source: str = ""
    se: float = math.nan

    @classmethod
    def of(cls, values, source: str = "our runs") -> Spread:
        """The mean, sample standard deviation (ddof 1) and count of per-run ``values``
        (NaNs dropped); one value has no spread."""
        v = np.asarray(values, dtype=float).ravel()
        v = v[~np.isnan(v)]
        if v.size == 0:
            return cls(math.nan, math.nan, 0.0, source)
        sd = float(v.std(ddof=1)) if v.size > 1 else math.nan
        return cls(float(v.mean()), sd, float(v.size), source)

    @property
    def has_spread(self) -> bool:
        if math.isnan(self.n) or self.n < 1:
            return False
        return not (math.isnan(self.sd) and math.isnan(self.se))

    @property
    def standard_error(self) -> float:
        """The standard error of the mean: ``se`` where given, else ``sd / sqrt(n)``."""
        return self.se if not math.isnan(self.se) else self.sd / math.sqrt(self.n)

    @property
    def run_sd(self) -> float:
        """The run-to-run standard deviation, or the one a bootstrap ``se`` implies
        (``se · sqrt(n)``): what a side without spread borrows."""
        return self.sd if not math.isnan(self.sd) else self.se * math.sqrt(self.n)


def bootstrap(values, statistic, *, resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = 0, source: str = "a bootstrap over our runs") -> Spread:
    """A statistic of our runs that is not their mean (a ratio of means, a largest value
    over a grid, a rank correlation, a spread across runs), with its bootstrap standard error.

    Parameters
    ----------
    values : array-like of shape (n_runs, n_columns)
        One row per run (or trial); the columns are the settings the statistic reads, kept
        together when a run is drawn (runs shared by the settings stay paired). NaN where a
        run lacks a setting.
    statistic : callable
        Maps such an array to a float.
    resamples, seed : int
        Bootstrap resamples (runs drawn with replacement) and the seed that draws them.

    Returns
    -------
    Spread
        ``mean`` the statistic of ``values``, ``se`` the standard deviation of its resampled
        values, ``n`` the run count.
    """
    v = np.asarray(values, dtype=float)
    v = v.reshape(len(v), -1)
    n = len(v)
    # a resample may miss every run of a setting (an empty mean): that replicate is dropped
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        estimate = float(statistic(v))
        if n < 2 or math.isnan(estimate):
            return Spread(estimate, math.nan, float(n), source)
        draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        replicates = np.array([statistic(v[rows]) for rows in draws], dtype=float)
    replicates = replicates[np.isfinite(replicates)]
    se = float(replicates.std(ddof=1)) if replicates.size > 1 else math.nan
    return Spread(estimate, math.nan, float(n), source, se=se)


@dataclass(frozen=True)
class Outcome:
    """A test's result: its ``verdict``, the tested ``statistic`` (the estimate the statement
    is about), the ``band`` it was held to (a half-width or the threshold's distance), the
    interval ``low``..``high`` the decision read, and a one-line ``detail``."""

    test: str
    verdict: str
    statistic: float
    band: float
    low: float
    high: float
    detail: str


def _quantile(one_sided: float, df: float) -> float:
    """Student's t quantile at ``one_sided`` (normal where ``df`` is infinite or unknown)."""
    # imported here: scipy.stats takes a second to import, and Snakemake's main process
    # imports this module to check the config's targets without deciding any verdict
    from scipy import stats

    if math.isnan(df) or math.isinf(df) or df <= 0:
        return float(stats.norm.ppf(one_sided))
    return float(stats.t.ppf(one_sided, df))


def _se_df(*sides: Spread) -> tuple[float, float, str]:
    """Standard error of the difference of the sides' means and its Welch-Satterthwaite
    degrees of freedom, after the stand-in rule; the rule applied, in words."""
    given = [s for s in sides if s.has_spread]
    if not given:
        return 0.0, math.inf, "no spread on any side: compared as exact"
    note = ""
    terms, dofs = [], []
    for side in sides:
        if side.has_spread:
            terms.append(side.standard_error ** 2)
            dofs.append(side.n - 1)
            continue
        donor = given[0]
        n = side.n if not math.isnan(side.n) and side.n >= 1 else donor.n
        terms.append(donor.run_sd ** 2 / n)
        dofs.append(donor.n - 1)
        note = (f"{side.source or 'a side'} gives no spread: the standard deviation of "
                f"{donor.source or 'the other side'} stands in, with {int(n)} runs")
    se = math.sqrt(sum(terms))
    denominator = sum(t * t / dof for t, dof in zip(terms, dofs, strict=True) if dof > 0)
    df = (sum(terms) ** 2 / denominator) if denominator > 0 else math.inf
    return se, df, note


def _nan_outcome(test: str, why: str) -> Outcome:
    return Outcome(test, "fail", math.nan, math.nan, math.nan, math.nan, why)


def same_value(ours: Spread, paper: Spread, reading_error: float = 0.0) -> Outcome:
    """Two means, the paper's and ours (Welch's test). Pass when the difference lies within
    ``t · sqrt(s_paper²/n_paper + s_ours²/n_ours)`` plus the reading error of the paper's
    number (half its last printed digit, or the reading of a figure), with t two-sided at the
    report's level; fail otherwise. A side that gives no spread takes the other side's
    standard deviation with its own run count (the paper's run count, or ours where the paper
    states none, with our run-to-run spread standing in for theirs); with no spread on either
    side the band is the reading error alone."""
    if math.isnan(ours.mean) or math.isnan(paper.mean):
        return _nan_outcome("same_value", "not measured")
    se, df, note = _se_df(paper, ours)
    band = _quantile(1 - (1 - LEVEL) / 2, df) * se + float(reading_error)
    diff = ours.mean - paper.mean
    verdict = "pass" if abs(diff) <= band + 1e-12 else "fail"
    detail = f"ours - paper = {diff:+.4g}, band ±{band:.4g}" + (f" ({note})" if note else "")
    return Outcome("same_value", verdict, diff, band, diff - band, diff + band, detail)


def equivalent(difference: Spread, margin: float, centre: float = 0.0) -> Outcome:
    """Equivalence ("the same", "similar", "close", "matches"): two one-sided tests on the
    difference (paired by trial where trials are paired). Pass when the two-sided
    1 - 2·(1 - level) interval of the mean difference lies inside ``centre ± margin``, the
    margin from the text or the report's declared default; fail when that interval lies
    wholly outside it (a difference beyond the margin is shown); not shown otherwise."""
    if math.isnan(difference.mean):
        return _nan_outcome("equivalent", "not measured")
    se, df, note = _se_df(difference)
    half = _quantile(LEVEL, df) * se
    d = difference.mean - centre
    low, high = d - half, d + half
    if -margin - 1e-12 <= low and high <= margin + 1e-12:
        verdict = "pass"
    elif low > margin or high < -margin:
        verdict = "fail"
    else:
        verdict = "not shown"
    detail = (f"difference {d:+.4g}, interval [{low:+.4g}, {high:+.4g}] against ±{margin:.4g}"
              + (f" ({note})" if note else ""))
    return Outcome("equivalent", verdict, d, float(margin), low, high, detail)


def _ordering(test: str, estimate: Spread, threshold: float, sign: int) -> Outcome:
    if math.isnan(estimate.mean):
        return _nan_outcome(test, "not measured")
    se, df, note = _se_df(estimate)
    half = _quantile(LEVEL, df) * se
    low, high = estimate.mean - half, estimate.mean + half
    # sign +1: the statement is estimate >= threshold; -1: estimate <= threshold
    shown = low >= threshold - 1e-12 if sign > 0 else high <= threshold + 1e-12
    contrary = high < threshold if sign > 0 else low > threshold
    verdict = "pass" if shown else ("fail" if contrary else "not shown")
    relation = ">=" if sign > 0 else "<="
    detail = (f"{estimate.mean:.4g} {relation} {threshold:.4g}? one-sided interval "
              f"[{low:.4g}, {high:.4g}]" + (f" ({note})" if note else ""))
    return Outcome(test, verdict, estimate.mean - threshold, half, low, high, detail)


def at_least(estimate: Spread, threshold: float) -> Outcome:
    """An ordering or a lower bound ("A beats B", "grows", "faster", "at least x"): a
    one-sided test of the mean (of paired differences where runs are paired) against the
    threshold. Pass when its one-sided lower bound at the report's level is at or above the
    threshold; fail when the one-sided upper bound is below it (the contrary is shown); not
    shown otherwise, so an effect of zero size is neither a pass nor a fail."""
    return _ordering("at_least", estimate, float(threshold), +1)


def at_most(estimate: Spread, threshold: float) -> Outcome:
    """The mirror of at_least ("A below B", "at most x"): pass when the one-sided
    upper bound is at or below the threshold; fail when the one-sided lower bound is above it;
    not shown otherwise."""
    return _ordering("at_most", estimate, float(threshold), -1)


def in_range(estimate: Spread, low: float, high: float) -> Outcome:
    """A printed range ("2-5 %", "0.1-1 %"), both ends: pass when the mean lies inside it;
    fail when the two-sided interval at the report's level lies wholly below its lower end or
    wholly above its upper end; not shown when the mean is outside but the interval reaches
    in."""
    if math.isnan(estimate.mean):
        return _nan_outcome("in_range", "not measured")
    se, df, note = _se_df(estimate)
    half = _quantile(1 - (1 - LEVEL) / 2, df) * se
    lo, hi = estimate.mean - half, estimate.mean + half
    if low - 1e-12 <= estimate.mean <= high + 1e-12:
        verdict = "pass"
    elif hi < low or lo > high:
        verdict = "fail"
    else:
        verdict = "not shown"
    end = "below the lower end" if estimate.mean < low else (
        "above the upper end" if estimate.mean > high else "inside")
    detail = (f"{estimate.mean:.4g} {end} of [{low:.4g}, {high:.4g}], interval "
              f"[{lo:.4g}, {hi:.4g}]" + (f" ({note})" if note else ""))
    return Outcome("in_range", verdict, estimate.mean, half, lo, hi, detail)


#: Every test, by the name a report row carries.
TESTS = {f.__name__: f for f in (same_value, equivalent, at_least, at_most, in_range)}


def methods_text() -> list[str]:
    """The report's *Methods* section: the level and every test's rule, from the docstrings
    above (one bullet each)."""
    lines = [f"Every judged row is one of these tests, all at {LEVEL:.0%} confidence. A "
             "number read off a figure carries its reading error; a side's spread is its "
             "run-to-run standard deviation and run count, the paper's as printed or drawn. "
             "Verdicts: *pass* (the statement holds at the level), *fail* (its contrary is "
             "shown), *not shown* (the runs cannot resolve it), *by construction* (holds "
             "whatever the algorithm does: not a reproduction), *reported* (nothing printed to "
             "compare). A row on stand-in data keeps its test's verdict and names the stand-in. "
             "A statistic that is not a mean over runs (a ratio of means, the largest value "
             f"over a grid, a rank correlation, a spread across runs) takes the standard error "
             f"of a bootstrap over our runs ({BOOTSTRAP_RESAMPLES:,} resamples, a run's "
             "settings drawn together, a fixed seed) with the run count's degrees of freedom. "
             "A statement about every setting (\"in all cases\", \"at every k\") is tested "
             "at each and its row shows the setting that decides it (an intersection-union "
             "test: it passes when every setting passes, fails when one fails).",
             ""]
    for name, func in TESTS.items():
        doc = " ".join((func.__doc__ or "").split())
        lines.append(f"- `{name}`: {doc}")
    return lines

"""The report's statistical tests on made numbers with known answers."""

import math

import numpy as np
import pytest
from scipy import stats

from fedclust import verdicts
from fedclust.reproduction import Claim, deciding
from fedclust.verdicts import (
    LEVEL,
    TESTS,
    Spread,
    at_least,
    at_most,
    equivalent,
    in_range,
    methods_text,
    same_value,
)


def test_spread_of_runs_is_mean_sample_sd_and_count():
    s = Spread.of([1.0, 2.0, 3.0, math.nan])
    assert (s.mean, s.sd, s.n) == (2.0, 1.0, 3.0)
    assert not Spread.of([4.0]).has_spread and Spread.of([4.0]).mean == 4.0


def test_same_value_band_uses_both_sides_spread_and_the_reading_error():
    paper = Spread(0.20, sd=0.03, n=10)
    ours = Spread(0.23, sd=0.03, n=10)
    out = same_value(ours, paper, reading_error=0.002)
    # Welch with equal sides: df = 18, se = 0.03 * sqrt(2 / 10)
    from scipy import stats
    expected = stats.t.ppf(0.975, 18) * 0.03 * math.sqrt(0.2) + 0.002
    assert out.band == pytest.approx(expected) and out.verdict == "pass"
    assert out.statistic == pytest.approx(0.03)
    assert same_value(Spread(0.26, 0.03, 10), paper, 0.002).verdict == "fail"
    # with no spread anywhere, the band is the reading error alone
    assert same_value(Spread(0.205), Spread(0.20), 0.01).band == pytest.approx(0.01)
    assert same_value(Spread(0.215), Spread(0.20), 0.01).verdict == "fail"


def test_a_side_without_spread_borrows_the_others_sd_with_its_own_run_count():
    ours = Spread(0.5, sd=0.1, n=4)
    out = same_value(ours, Spread(0.45, n=10), 0.0)
    assert "stands in" in out.detail and "10 runs" in out.detail
    se = math.sqrt(0.01 / 10 + 0.01 / 4)
    assert out.band > 1.96 * se       # t with few degrees of freedom, wider than normal


def test_no_band_is_computed_from_a_mean():
    bands = {same_value(Spread(m, 0.02, 10), Spread(0.3, 0.01, 10), 0.002).band
             for m in (0.0, 0.3, 5.0)}
    assert len(bands) == 1
    claim_bands = {Claim("p", "i", "q", reproduced=m, paper_value=0.3, tolerance=0.002,
                         ours_sd=0.02, n_ours=10, paper_sd=0.01, n_paper=10).band
                   for m in (0.0, 0.3, 5.0)}
    assert len(claim_bands) == 1


def test_equivalence_inside_outside_and_unresolved():
    assert equivalent(Spread(0.002, 0.01, 40), margin=0.01).verdict == "pass"
    assert equivalent(Spread(0.05, 0.01, 40), margin=0.01).verdict == "fail"
    # the LocalKMeans Fig 1 case: -0.018 with a paired sd of 0.08 over 20 trials
    out = equivalent(Spread(-0.018, 0.08, 20), margin=0.01)
    assert out.verdict == "not shown" and out.low < -0.01 < out.high
    # the interval is 1 - 2 alpha wide (one-sided quantile at LEVEL)
    from scipy import stats
    half = stats.t.ppf(LEVEL, 19) * 0.08 / math.sqrt(20)
    assert out.high - out.low == pytest.approx(2 * half)


def test_ordering_shown_contrary_and_zero_effect_not_shown():
    assert at_least(Spread(0.05, 0.01, 10), 0.0).verdict == "pass"
    assert at_least(Spread(-0.05, 0.01, 10), 0.0).verdict == "fail"
    # k-FED Fig 4 on Shakespeare: -0.0012 +- 0.0027 over 3 runs: an effect of zero size
    assert at_least(Spread(-0.0012, 0.0027, 3), 0.0).verdict == "not shown"
    assert at_most(Spread(-0.05, 0.01, 10), 0.0).verdict == "pass"
    assert at_most(Spread(0.05, 0.01, 10), 0.0).verdict == "fail"
    # a number with no spread is compared as exact
    assert at_least(Spread(0.0), 0.0).verdict == "pass"
    assert at_least(Spread(-1e-6), 0.0).verdict == "fail"


def test_a_range_is_checked_at_both_ends():
    assert in_range(Spread(0.03, 0.01, 30), 0.02, 0.05).verdict == "pass"
    # violated at the upper end: "2-5 %" is not "at least 1 %"
    assert in_range(Spread(0.09, 0.01, 30), 0.02, 0.05).verdict == "fail"
    assert in_range(Spread(0.001, 0.001, 30), 0.02, 0.05).verdict == "fail"
    # outside, but the interval reaches in
    assert in_range(Spread(0.055, 0.02, 5), 0.02, 0.05).verdict == "not shown"


def test_a_measure_never_taken_fails_every_test():
    for test in (lambda s: same_value(s, Spread(1.0), 0.1), lambda s: equivalent(s, 0.1),
                 lambda s: at_least(s, 0.0), lambda s: in_range(s, 0.0, 1.0)):
        assert test(Spread(math.nan)).verdict == "fail"


def test_claims_choose_the_test_of_their_comparison():
    same = Claim("p", "i", "q", reproduced=0.25, paper_value=0.369, tolerance=0.002,
                 ours_sd=0.02, n_ours=10, paper_sd=0.03, n_paper=10)
    assert same.test == "same_value" and same.status == "fail"
    eq = Claim("p", "i", "q", reproduced=0.0, paper_value=0.0, tolerance=0.01,
               comparison="equivalent", ours_sd=0.01, n_ours=50)
    assert eq.test == "equivalent" and eq.status == "pass"
    faster = Claim("p", "i", "q", reproduced=-0.0012, paper_value=0.0, tolerance=0.0,
                   comparison="at_least", ours_sd=0.0027, n_ours=3)
    assert faster.status == "not shown" and faster.within_band is False


def test_methods_state_every_test_from_its_docstring():
    text = "\n".join(methods_text())
    for name, func in TESTS.items():
        assert f"`{name}`" in text
        assert " ".join(func.__doc__.split()[:6]) in text
    assert f"{LEVEL:.0%}" in text


def test_bootstrap_standard_error_of_a_mean_matches_its_formula():
    rng = np.random.default_rng(3)
    values = rng.normal(0.0, 2.0, size=(40, 1))
    spread = verdicts.bootstrap(values, lambda v: float(v.mean()))
    # the bootstrap's standard error of a mean is the plug-in sd / sqrt(n)
    assert spread.se == pytest.approx(values.std() / math.sqrt(40), rel=0.08)
    assert spread.n == 40 and math.isnan(spread.sd)
    again = verdicts.bootstrap(values, lambda v: float(v.mean()))
    assert again.se == spread.se           # a fixed seed: a rerun gives the same bytes
    assert math.isnan(verdicts.bootstrap(values[:1], lambda v: float(v.mean())).se)


def test_a_bootstrap_standard_error_decides_an_ordering():
    # a ratio of means 0.9 whose bootstrap se over 10 runs is 0.02: shown below 1; with a se
    # of 0.2 the same ratio is not shown
    tight = verdicts.Spread(0.9, n=10, se=0.02)
    loose = verdicts.Spread(0.9, n=10, se=0.2)
    assert verdicts.at_most(tight, 1.0).verdict == "pass"
    assert verdicts.at_most(loose, 1.0).verdict == "not shown"
    assert verdicts.at_most(tight, 1.0).band == pytest.approx(stats.t.ppf(0.95, 9) * 0.02)


def test_a_statement_about_every_setting_is_decided_by_its_weakest_setting():
    def claim(reproduced, sd):
        return Claim(paper="p", item="i", quantity="q", reproduced=reproduced,
                     paper_value=1.0, comparison="at_most", ours_sd=sd, n_ours=10)
    sure, unsure, over = claim(0.5, 0.1), claim(0.95, 0.2), claim(1.5, 0.1)
    assert deciding([sure, unsure]) is unsure and unsure.status == "not shown"
    assert deciding([sure, unsure, over]) is over and over.status == "fail"
    nearer = claim(0.8, 0.1)
    assert deciding([sure, nearer]) is nearer and nearer.status == "pass"

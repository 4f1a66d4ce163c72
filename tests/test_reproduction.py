import math

import numpy as np
import pandas as pd
import pytest

from fedclust.reproduction import (
    CLAIM_COLUMNS,
    Claim,
    checked,
    claims_table,
    declare_profile,
    definition_changes,
    expectation,
    gather_claims,
    load_targets,
    target,
    target_keys,
    verdict_changes,
    write_reproduction,
)

from .conftest import REPO


def test_claim_status_and_margin():
    ok = Claim("p", "i", "q", reproduced=0.99, paper_value=1.0, tolerance=0.02)
    assert ok.status == "pass" and ok.margin == pytest.approx(0.01) and ok.within_band
    bad = Claim("p", "i", "q", reproduced=0.95, paper_value=1.0, tolerance=0.02)
    assert bad.status == "fail" and bad.margin == pytest.approx(-0.03) and not bad.within_band
    at_least = Claim("p", "i", "q", reproduced=0.3, paper_value=0.0, tolerance=0.0,
                     comparison="at_least")
    assert at_least.status == "pass" and at_least.margin == pytest.approx(0.3)
    at_most = Claim("p", "i", "q", reproduced=1.2, paper_value=1.0, tolerance=0.1,
                    comparison="at_most")
    assert at_most.status == "fail"
    info = Claim("p", "i", "q", reproduced=3.0, comparison="reported")
    assert info.status == "reported" and math.isnan(info.margin) and info.within_band is None
    with pytest.raises(ValueError, match="unknown comparison"):
        Claim("p", "i", "q", reproduced=1.0, comparison="roughly")


def test_a_printed_range_is_checked_at_both_ends():
    def claim(r):
        return Claim("p", "i", "q", reproduced=r, paper_value=0.001, paper_high=0.01,
                     comparison="between")
    assert claim(0.005).status == "pass" and claim(0.005).margin == pytest.approx(0.004)
    assert claim(0.000177).status == "fail"     # below the lower end: no longer a pass
    assert claim(0.02).status == "fail"


def test_a_setting_not_measured_fails():
    missing = Claim("p", "i", "q", reproduced=math.nan, paper_value=1.0, tolerance=0.1)
    assert missing.status == "fail" and missing.within_band is False
    assert math.isnan(missing.margin)


def test_checked_claims_take_value_tolerance_place_and_key_from_the_target(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "paper:\n  fig9:\n    where: Fig 9\n    comparison: at_most\n    value: 1.0\n"
        "    tolerance: 0.1\n    provenance: a statement\n")
    spec = load_targets(tmp_path / "t.yaml")["paper"]["fig9"]
    claim = checked(spec, paper="p", item="i", quantity="q", reproduced=1.05)
    assert claim.status == "pass" and claim.where == "Fig 9" and claim.key == "paper.fig9"
    assert claim.provenance == "a statement" and claim.margin == pytest.approx(0.05)
    # a plain dict built from the target loses the key unless it is given
    assert checked({**spec, "value": 2.0}, paper="p", item="i", quantity="q",
                   reproduced=1.0).key == ""


def test_a_stated_reason_never_turns_a_miss_into_anything_but_fail():
    spec = {"where": "Fig 4(b)", "comparison": "at_least", "value": 0.0, "tolerance": 0.0,
            "why_ours_differs": "the SNR is held fixed across K"}
    failing = checked(spec, paper="p", item="i", quantity="q", reproduced=-0.01)
    assert failing.status == "fail" and failing.explanation.startswith("the SNR")
    assert checked(spec, paper="p", item="i", quantity="q", reproduced=0.01).status == "pass"


def test_deviation_and_by_construction_verdicts():
    spec = {"where": "Fig 3", "comparison": "at_most", "value": 1.0, "tolerance": 0.0,
            "by_construction": "one round against many"}
    assert checked(spec, paper="p", item="i", quantity="q",
                   reproduced=0.1).status == "by construction"
    # a by-construction check that fails is a plain fail: something is broken
    assert checked(spec, paper="p", item="i", quantity="q", reproduced=2.0).status == "fail"
    stand_in = Claim("p", "i", "q", reproduced=0.5, paper_value=1.0, tolerance=0.1,
                     deviation="a synthetic stand-in for YearPredictionMSD")
    # a stand-in qualifies the row; the verdict is the test's
    assert stand_in.status == "fail" and stand_in.within_band is False
    assert "stand-in" in stand_in.stand_in
    near = Claim("p", "i", "q", reproduced=0.95, paper_value=1.0, tolerance=0.1,
                 deviation="a synthetic stand-in")
    assert near.status == "pass" and near.stand_in == "a synthetic stand-in"


def test_profile_declarations_cover_the_target_and_everything_under_it():
    claims = [Claim("p", "a", "q", reproduced=0.5, paper_value=1.0, tolerance=0.1,
                    key="kfed.table2.values"),
              Claim("p", "b", "q", reproduced=1.0, paper_value=1.0, tolerance=0.1,
                    key="kfed.table2.above_global"),
              Claim("p", "c", "q", reproduced=0.5, paper_value=1.0, tolerance=0.1,
                    key="kfed.table1"),
              Claim("p", "d", "q", reproduced=0.5, comparison="reported",
                    key="kfed.table2.values")]
    declare_profile(claims, {"kfed.table2": "60 rounds instead of the paper's 1,000 or more"})
    assert [c.status for c in claims] == ["not at this profile", "not at this profile", "fail",
                                          "reported"]
    assert "60 rounds" in claims[0].explanation and "the test: fail" in claims[0].explanation
    assert "the test: pass" in claims[1].explanation


def test_the_report_counts_every_verdict_and_lists_each_miss_with_its_reason(tmp_path):
    claims = [Claim("LocalKMeans", "Fig 4(b)", "more clusters worse", reproduced=-0.01,
                    paper_value=0.0, tolerance=0.0, comparison="at_least",
                    explanation="r is held fixed | so larger K is easier", note="K=2: 0.1",
                    key="lkm.fig4"),
              Claim("LocalKMeans", "Fig 4(a)", "higher SNR better", reproduced=-0.3,
                    paper_value=0.0, tolerance=0.0, comparison="at_most",
                    explanation="never shown: this one passes", key="lkm.fig4a"),
              Claim("k-FED", "Table 2", "accuracy", reproduced=0.9, paper_value=0.98,
                    tolerance=0.015, key="kfed.table2.values")]
    declare_profile(claims, {"kfed.table2": "60 rounds only", "kfed.fig9": "never matches"})
    write_reproduction(claims_table(claims), tmp_path / "r.csv", tmp_path / "r.md",
                       profile="quick", declared={"kfed.table2": "60 rounds only",
                                                  "kfed.fig9": "never matches"})
    text = (tmp_path / "r.md").read_text()
    assert ("**1 pass**, **1 fail**, **0 not shown**, **1 not at this profile**, "
            "**0 by construction**, **0 reported**") in text
    assert "## Methods" in text and "`same_value`: Two means" in text
    section = text.split("## Fails, with the measured reason")[1].split("##")[0]
    assert "Fig 4(b) (more clusters worse): r is held fixed" in section
    assert "Measured: K=2: 0.1" in section and "never shown" not in section
    assert "60 rounds only" in text.split("## Not at this profile")[1]
    assert "`kfed.fig9`" in text.split("## Declarations that matched no row")[1]
    assert pd.read_csv(tmp_path / "r.csv").status.tolist() == ["fail", "pass",
                                                                "not at this profile"]
    # every row of the Markdown table has as many cells as the header
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    cells = {len(line.replace("\\|", "").split("|")) for line in rows}
    assert len(rows) == 4 and len(cells) == 1, rows


def test_an_equivalence_rows_check_keeps_the_table_s_cells(tmp_path):
    # the equivalence test's check reads "|r - p| <= tol": its bars are escaped, as every
    # cell's, so the row has the header's cells (unescaped it split into two more)
    claims = [Claim("k-FED", "Table 2", "k-FED minus IFCA", reproduced=0.001, paper_value=0.0,
                    tolerance=0.006, comparison="equivalent", key="kfed.table2.equal")]
    write_reproduction(claims_table(claims), tmp_path / "r.csv", tmp_path / "r.md")
    rows = [line for line in (tmp_path / "r.md").read_text().splitlines()
            if line.startswith("| ")]
    assert "\\|r - p\\| <= tol" in rows[1]
    cells = {len(line.replace("\\|", "").split("|")) for line in rows}
    assert len(rows) == 2 and len(cells) == 1, rows


def test_verdict_changes_in_either_direction_and_new_or_lost_rows():
    def table(statuses):
        return pd.DataFrame({"key": [f"k.{i}" for i in statuses], "item": "i", "quantity": "q",
                             "status": list(statuses.values())})
    expected = table({1: "pass", 2: "fail", 3: "pass"})
    assert verdict_changes(expected, expected).empty
    now = table({1: "fail", 2: "pass", 4: "pass"})
    changes = verdict_changes(now, expected).set_index("key")
    assert changes.loc["k.1"].tolist()[-2:] == ["pass", "fail"]
    assert changes.loc["k.2"].tolist()[-2:] == ["fail", "pass"]
    assert pd.isna(changes.loc["k.3", "status_now"]) and pd.isna(changes.loc["k.4",
                                                                            "status_expected"])
    with pytest.raises(ValueError, match="share a"):
        verdict_changes(pd.concat([now, now]), expected)


def test_a_changed_test_or_paper_value_is_a_definition_change_that_survives_csv(tmp_path):
    claims = claims_table([
        Claim("p", "i", "q", reproduced=0.5, paper_value=0.4, paper_sd=0.1, n_paper=10,
              tolerance=0.002, key="k.1"),
        Claim("p", "j", "q", reproduced=0.5, paper_value=0.0, tolerance=0.01,
              comparison="equivalent", key="k.2"),
        Claim("p", "l", "q", reproduced=2.0, comparison="reported", key="k.3")])
    path = tmp_path / "verdicts.csv"
    expectation(claims).to_csv(path, index=False)
    expected = pd.read_csv(path, keep_default_na=False, dtype=str)
    assert definition_changes(claims, expected).empty      # read back: nothing moved
    assert verdict_changes(claims, expected).empty
    moved = claims_table([
        Claim("p", "i", "q", reproduced=0.9, paper_value=0.4, paper_sd=0.1, n_paper=10,
              tolerance=0.002, key="k.1"),           # our number moved: not a definition
        Claim("p", "j", "q", reproduced=0.5, paper_value=0.0, tolerance=0.02,
              comparison="equivalent", key="k.2"),   # the margin moved
        Claim("p", "l", "q", reproduced=2.0, paper_value=1.0, comparison="at_least",
              key="k.3")])                           # a reported row became a test
    changed = definition_changes(moved, expected).set_index("key")
    assert sorted(changed.index) == ["k.2", "k.3"]
    assert changed.loc["k.2", ["tolerance_expected", "tolerance_now"]].tolist() == \
        ["0.01", "0.02"]
    assert changed.loc["k.3", "test_now"] == "at_least"


def test_targets_are_read_once_per_version_of_the_file_and_each_caller_gets_its_own(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("kfed:\n  fig1: {value: 1, values: [1, 2]}\n")
    first = load_targets(path)
    first["kfed"]["fig1"]["value"] = 99
    first["kfed"]["fig1"]["values"].append(3)
    second = load_targets(path)
    assert second["kfed"]["fig1"] == {"value": 1, "values": [1, 2]}
    assert second["kfed"]["fig1"].key == "kfed.fig1"
    path.write_text("kfed:\n  fig1: {value: 2, values: [1, 2]}\n  fig2: {value: 3}\n")
    assert load_targets(path)["kfed"]["fig1"]["value"] == 2


def test_targets_file_loads_and_names_missing_keys(tmp_path):
    targets = load_targets(REPO / "config" / "paper_targets.yaml")
    assert len(targets["kfed"]["table1"]["rows"]) == 5
    (tmp_path / "t.yaml").write_text("- not a mapping\n")
    with pytest.raises(ValueError, match="t.yaml: expected a mapping"):
        load_targets(tmp_path / "t.yaml")
    with pytest.raises(KeyError, match="kfed.table1"):
        target({"kfed": {}}, "kfed", "table1")
    assert {"kfed.table2.values", "kfed.table2", "coreset.graphs.theory_fraction"} <= \
        target_keys(targets)
    empty = gather_claims([claims_table([])])
    assert list(empty.columns) == list(CLAIM_COLUMNS) and empty.empty


def test_every_target_says_where_it_is_printed():
    targets = load_targets(REPO / "config" / "paper_targets.yaml")

    def walk(node, path):
        if isinstance(node, dict):
            if "comparison" in node:
                assert node.get("where") and node.get("provenance"), path
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")
    walk(targets, "targets")
    assert targets["kfed"]["table1"]["where"] == "Table 1 (Sec. 4.1)"


def test_every_skipped_setting_is_a_row_with_its_reason():
    from fedclust.io import skipped, tidy
    from fedclust.reproduction import skipped_claims

    records = [{"dataset": "toy", "dropout": 0.5, "run": 0, "cost": 1.0},
               skipped({"dataset": "toy", "dropout": 0.9, "run": 0}, "one device left"),
               skipped({"dataset": "toy", "dropout": 0.9, "run": 1}, "one device left")]
    table = tidy(records, ["dataset", "dropout", "run"])
    rows = skipped_claims("p", "kfed", {"participation": table, "other": table.iloc[:1]})
    assert len(rows) == 1 and rows[0].status == "reported"
    assert rows[0].item == "participation: dataset=toy, dropout=0.9"
    assert rows[0].note == "runs [0, 1]: one device left" and rows[0].key == "kfed.skipped"


def test_rows_without_a_key_survive_the_expectation_file(tmp_path):
    """Rows with no target key (a reported measurement) or no quantity read back from the
    committed CSV as empty strings: the same row, not a changed verdict."""
    table = pd.DataFrame({"key": ["k.1", np.nan], "item": ["i", "j"],
                          "quantity": [np.nan, "q"], "status": ["pass", "reported"]})
    path = tmp_path / "verdicts.csv"
    expectation(table).to_csv(path, index=False)
    assert verdict_changes(table, pd.read_csv(path, keep_default_na=False)).empty
    # and the report, written from claims read back from CSV (the key column then holds NaN)
    claims = claims_table([Claim("k-FED", "Table 2", "accuracy", reproduced=0.9,
                                 paper_value=0.98, tolerance=0.015, key="kfed.table2.values"),
                           Claim("comparison", "ranking", "cost", reproduced=1.1,
                                 comparison="reported")])
    claims.to_csv(tmp_path / "claims.csv", index=False)
    write_reproduction(pd.read_csv(tmp_path / "claims.csv"), tmp_path / "r.csv",
                       tmp_path / "r.md", declared={"kfed.fig9": "a declaration for no row"})
    assert "`kfed.fig9`" in (tmp_path / "r.md").read_text()


def test_a_row_that_does_not_pass_always_says_why():
    rows = claims_table([Claim("p", "i", "q", reproduced=0.5, paper_value=0.4, tolerance=0.01),
                         Claim("p", "j", "q", reproduced=0.4, paper_value=0.4, tolerance=0.01),
                         Claim("p", "k", "q", reproduced=0.9, paper_value=0.4, tolerance=0.01,
                               explanation="a stated reason")])
    assert rows.explanation.tolist()[0].startswith("the test measured ours - paper = +0.1")
    assert rows.explanation.tolist()[1:] == ["", "a stated reason"]

import math

import pandas as pd
import pytest

from fedclust.reproduction import (
    CLAIM_COLUMNS,
    Claim,
    checked,
    claims_table,
    gather_claims,
    load_targets,
    target,
    write_reproduction,
)

from .conftest import REPO


def test_claim_status_and_margin():
    ok = Claim("p", "i", "q", reproduced=0.99, paper_value=1.0, tolerance=0.02)
    assert ok.status == "pass" and ok.margin == pytest.approx(0.01)
    bad = Claim("p", "i", "q", reproduced=0.95, paper_value=1.0, tolerance=0.02)
    assert bad.status == "fail" and bad.margin == pytest.approx(-0.03)
    at_least = Claim("p", "i", "q", reproduced=0.3, paper_value=0.0, tolerance=0.0,
                     comparison="at_least")
    assert at_least.status == "pass" and at_least.margin == pytest.approx(0.3)
    at_most = Claim("p", "i", "q", reproduced=1.2, paper_value=1.0, tolerance=0.1,
                    comparison="at_most")
    assert at_most.status == "fail"
    info = Claim("p", "i", "q", reproduced=3.0, comparison="reported")
    assert info.status == "reported" and math.isnan(info.margin)
    assert Claim("p", "i", "q", reproduced=math.nan, comparison="not_run").status == "not run"
    assert Claim("p", "i", "q", reproduced=1.0, comparison="deviation").status == "deviation"
    with pytest.raises(ValueError, match="unknown comparison"):
        Claim("p", "i", "q", reproduced=1.0, comparison="roughly")


def test_checked_claims_take_value_tolerance_and_place_from_the_target():
    spec = {"where": "Fig 9", "comparison": "at_most", "value": 1.0, "tolerance": 0.1,
            "provenance": "a statement"}
    claim = checked(spec, paper="p", item="i", quantity="q", reproduced=1.05)
    assert claim.status == "pass" and claim.where == "Fig 9"
    assert claim.provenance == "a statement" and claim.margin == pytest.approx(0.05)


def test_a_failing_check_with_a_stated_reason_contradicts_and_without_fails():
    spec = {"where": "Fig 4(b)", "comparison": "at_least", "value": 0.0, "tolerance": 0.0,
            "why_ours_differs": "the SNR is held fixed across K"}
    failing = checked(spec, paper="p", item="i", quantity="q", reproduced=-0.01)
    assert failing.status == "contradicts" and failing.explanation.startswith("the SNR")
    assert checked(spec, paper="p", item="i", quantity="q", reproduced=0.01).status == "pass"
    spec.pop("why_ours_differs")
    assert checked(spec, paper="p", item="i", quantity="q", reproduced=-0.01).status == "fail"


def test_the_report_lists_each_contradiction_with_its_reason(tmp_path):
    claims = [Claim("LocalKMeans", "Fig 4(b)", "more clusters worse", reproduced=-0.01,
                    paper_value=0.0, tolerance=0.0, comparison="at_least",
                    explanation="r is held fixed | so larger K is easier"),
              Claim("LocalKMeans", "Fig 4(a)", "higher SNR better", reproduced=-0.3,
                    paper_value=0.0, tolerance=0.0, comparison="at_most",
                    explanation="never shown: this one passes")]
    write_reproduction(claims_table(claims), tmp_path / "r.csv", tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "1 pass, 0 fail, 1 contradict the paper" in text
    section = text.split("## Where this run contradicts the paper, and why")[1]
    assert "Fig 4(b) (more clusters worse): r is held fixed" in section
    assert "never shown" not in section
    assert pd.read_csv(tmp_path / "r.csv").status.tolist() == ["contradicts", "pass"]


def test_write_reproduction_report(tmp_path):
    claims = [Claim("k-FED", "Table 1, d=100", "accuracy", reproduced=1.0, paper_value=1.0,
                    tolerance=0.02, provenance="printed in Table 1", where="Table 1"),
              Claim("k-FED", "Fig 3", "ratio", reproduced=1.05, paper_value=1.0, tolerance=0.1,
                    comparison="at_most", note="rounds 1 | 40"),
              Claim("k-FED", "Table 2", "accuracy", reproduced=math.nan, paper_value=0.98,
                    comparison="not_run", note="not built yet")]
    write_reproduction(claims_table(claims), tmp_path / "r.csv", tmp_path / "r.md", profile="quick")
    text = (tmp_path / "r.md").read_text()
    assert "2 pass, 0 fail" in text and "1 printed but not run yet" in text
    assert "printed in Table 1" in text and "**pass**" in text and "**not run**" in text
    assert pd.read_csv(tmp_path / "r.csv").status.tolist() == ["pass", "pass", "not run"]
    # every row of the Markdown table has as many cells as the header
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    cells = {len(line.replace("\\|", "").split("|")) for line in rows}
    assert len(rows) == 4 and len(cells) == 1, rows


def test_targets_file_loads_and_names_missing_keys(tmp_path):
    targets = load_targets(REPO / "config" / "paper_targets.yaml")
    assert len(targets["kfed"]["table1"]["rows"]) == 5
    (tmp_path / "t.yaml").write_text("- not a mapping\n")
    with pytest.raises(ValueError, match="t.yaml: expected a mapping"):
        load_targets(tmp_path / "t.yaml")
    with pytest.raises(KeyError, match="kfed.table1"):
        target({"kfed": {}}, "kfed", "table1")
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

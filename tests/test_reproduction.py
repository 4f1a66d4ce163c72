import math

import pandas as pd
import pytest

from fedclust.reproduction import (
    CLAIM_COLUMNS,
    Claim,
    claims_table,
    fig2_claims,
    fig3_claims,
    gather_claims,
    kfed_claims,
    load_targets,
    localkmeans_claims,
    separation_claims,
    table1_claims,
    write_reproduction,
)


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
    with pytest.raises(ValueError, match="unknown comparison"):
        Claim("p", "i", "q", reproduced=1.0, comparison="roughly")


def runs_table(values):
    rows = []
    for (d, k), accs in values.items():
        for run, a in enumerate(accs):
            rows.append({"n_features": d, "n_clusters": k, "run": run, "metric": "accuracy",
                         "value": a})
            rows.append({"n_features": d, "n_clusters": k, "run": run, "metric": "n_devices",
                         "value": 20})
    return pd.DataFrame(rows)


TARGETS = {"kfed": {
    "table1": {"tolerance": 0.02, "provenance": "test",
               "rows": [{"n_features": 100, "n_clusters": 16, "value": 1.0},
                        {"n_features": 300, "n_clusters": 64, "value": 0.9}]},
    "fig5": {"provenance": "test"}}}


def test_table1_claims_compare_each_row_mean():
    runs = runs_table({(100, 16): [1.0, 0.98, 1.0], (300, 64): [0.8, 0.8]})
    claims = table1_claims(runs, TARGETS)
    assert [c.status for c in claims] == ["pass", "fail"]
    assert claims[0].reproduced == pytest.approx(0.99333, abs=1e-4)
    assert claims[1].margin == pytest.approx(0.02 - 0.1)


def test_separation_claims_report_the_chosen_k():
    summary = pd.DataFrame({"dataset": ["MNIST"] * 2, "n_samples": [70000] * 2,
                            "n_clusters": [5, 8], "device_clusters": [1, 1],
                            "devices_per_cluster": [1, 1], "threshold": [0.5, 0.5],
                            "share_above": [1.0, 0.7], "chosen": [True, False]})
    claims = separation_claims(summary, TARGETS)
    assert [c.reproduced for c in claims] == [5.0, 1.0]
    assert all(c.status == "reported" for c in claims)


def test_write_reproduction_report(tmp_path):
    claims = [Claim("k-FED", "Table 1, d=100", "accuracy", reproduced=1.0, paper_value=1.0,
                    tolerance=0.02, provenance="printed in Table 1"),
              Claim("k-FED", "Fig 3", "ratio", reproduced=1.05, paper_value=1.0, tolerance=0.1,
                    comparison="at_most", note="rounds 1 | 40")]
    write_reproduction(claims_table(claims), tmp_path / "r.csv", tmp_path / "r.md", profile="quick")
    text = (tmp_path / "r.md").read_text()
    assert "2 pass, 0 fail" in text and "printed in Table 1" in text and "**pass**" in text
    assert pd.read_csv(tmp_path / "r.csv").status.tolist() == ["pass", "pass"]
    # every row of the Markdown table has as many cells as the header
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    cells = {len(line.replace("\\|", "").split("|")) for line in rows}
    assert len(rows) == 3 and len(cells) == 1, rows


def test_targets_file_loads_and_names_missing_keys(tmp_path):
    from .conftest import REPO
    targets = load_targets(REPO / "config" / "paper_targets.yaml")
    assert len(targets["kfed"]["table1"]["rows"]) == 5
    (tmp_path / "t.yaml").write_text("- not a mapping\n")
    with pytest.raises(ValueError, match="t.yaml: expected a mapping"):
        load_targets(tmp_path / "t.yaml")
    with pytest.raises(KeyError, match="kfed.table1"):
        table1_claims(runs_table({(1, 2): [1.0]}), {"kfed": {}})


FIG_TARGETS = {"kfed": {
    "fig2": {"comparison": "at_most", "value": 1.0, "tolerance": 0.0, "provenance": "t"},
    "fig3": {"comparison": "at_most", "value": 1.0, "tolerance": 0.1, "provenance": "t"}}}


def fig2_runs(structured, iid, oracle=100.0, k=9):
    rows = []
    for kp, (s, i) in enumerate(zip(structured, iid, strict=True), start=1):
        for metric, value in (("structured_cost", s), ("iid_cost", i), ("oracle_cost", oracle)):
            rows.append({"dataset": "toy", "n_clusters": k, "device_clusters": kp, "run": 0,
                         "metric": metric, "value": value})
    return pd.DataFrame(rows)


def test_fig2_claim_uses_small_k_prime_only():
    # k = 9: k' in {1, 2, 3} counts; k' = 4 (structured worse) is outside the claim
    runs = fig2_runs(structured=[101, 102, 103, 200], iid=[110, 110, 110, 110])
    (claim,) = fig2_claims(runs, FIG_TARGETS)
    assert claim.reproduced == pytest.approx(2 / 10)
    assert claim.status == "pass" and claim.margin == pytest.approx(0.8)
    assert "k' in [1, 2, 3]" in claim.item
    (bad,) = fig2_claims(fig2_runs(structured=[120, 120, 120], iid=[110, 110, 110]), FIG_TARGETS)
    assert bad.status == "fail"


def test_fig3_claim_compares_mean_costs():
    rows = []
    for algo, cost, rounds in (("k-FED", 105.0, 1), ("distributed Lloyd", 100.0, 40)):
        for metric, value in (("cost", cost), ("rounds", rounds)):
            rows.append({"dataset": "toy", "n_clusters": 5, "device_clusters": 2, "run": 0,
                         "algorithm": algo, "metric": metric, "value": value})
    (claim,) = fig3_claims(pd.DataFrame(rows), FIG_TARGETS)
    assert claim.reproduced == pytest.approx(1.05)
    assert claim.status == "pass" and claim.margin == pytest.approx(0.05)
    assert "rounds: k-FED 1, naive 40.0" in claim.note


def test_paper_claims_read_the_tables_by_name():
    runs = runs_table({(100, 16): [1.0, 1.0]})
    claims = kfed_claims({"table1": runs}, TARGETS)
    assert [c.item for c in claims] == ["Table 1, d=100, k=16"]
    assert localkmeans_claims({}, {}) == []
    empty = gather_claims([claims_table([])])
    assert list(empty.columns) == list(CLAIM_COLUMNS) and empty.empty


def test_localkmeans_claims():
    rows = []
    for ds, finals in {"a": {"L=1": 0.10, "L=3": 0.11, "no aggregation": 0.20},
                       "b": {"L=1": 0.10, "L=3": 0.15, "no aggregation": 0.12}}.items():
        for label, value in finals.items():
            rows.append({"dataset": ds, "local_steps": label, "trial": 0, "iteration": 5,
                         "n_iter": 5, "metric": "misclustering", "value": value})
    targets = {"localkmeans": {
        "no_aggregation_worst": {"comparison": "at_least", "value": 0, "tolerance": 0},
        "few_aggregations_close": {"comparison": "at_most", "value": 0, "tolerance": 0.02}}}
    claims = localkmeans_claims({"real": pd.DataFrame(rows)}, targets)
    assert [c.status for c in claims] == ["pass", "pass", "fail", "fail"]
    assert claims[0].reproduced == pytest.approx(0.09)
    # a: no aggregation worst, L=3 within 2 points; b: neither holds
    assert [c.item for c in claims] == ["Figs 2-3, a"] * 2 + ["Figs 2-3, b"] * 2
    assert claims[3].reproduced == pytest.approx(0.05)

"""Publishing a finished run: what a reader sees without running the pipeline."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fedclust.pipeline.config import validate_config
from fedclust.pipeline.publish import (
    FIRST_SCREEN,
    counts_line,
    moved_mark,
    per_part_costs,
    publish_report,
)
from fedclust.pipeline.registry import figure_names
from fedclust.reproduction import VERDICTS

from .test_pipeline_benchmarks import write_benchmark

REPO = Path(__file__).resolve().parents[1]


def fake_run(root: Path, *, noisy_pngs: bool = False) -> dict:
    """A finished run's layout: the report, benchmark files, the config, one PNG per figure
    the config declares."""
    from matplotlib import image

    # as the run writes it: validated, the schema's defaults filled in
    config = validate_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
                             REPO / "config" / "schema.yaml")
    (root / "results").mkdir(parents=True)
    (root / "results" / "run_config.yaml").write_text(yaml.safe_dump({"config": config}))
    statuses = ["pass", "pass", "fail", "not shown", "reported"]
    pd.DataFrame({"key": ["a.b"] * 5, "item": list("vwxyz"), "quantity": ["q"] * 5,
                  "status": statuses}).to_csv(root / "results" / "reproduction.csv",
                                              index=False)
    (root / "results" / "reproduction.md").write_text("# Reproduction report\n")
    bench = root / "results" / "benchmarks"
    write_benchmark(bench, "kfed_table2/kfed/table2/z100_k1_ifca.tsv", 540.0, 3100.0, 530.0)
    write_benchmark(bench, "coreset_setting/coreset/kmeans/msd_mixture/n100/grid_uniform.tsv",
                    900.0, 1200.0, 890.0)
    write_benchmark(bench, "prepare_dataset/data/prepare_mnist.tsv", 30.0, 400.0, 29.0)
    write_benchmark(bench, "reproduction/reproduction.tsv", 1.0, 100.0, 1.0)
    (root / "figures").mkdir()
    rng = np.random.default_rng(0)
    names = [f"{paper}_{name}.png" for paper, names in figure_names(config).items()
             for name in names]
    for name in names:
        pixels = rng.random((60, 80, 3)) if noisy_pngs else np.full((60, 80, 3), 0.5)
        image.imsave(root / "figures" / name, pixels)
    return {"names": names, "statuses": statuses}


def git_history(root, commits_after: int) -> str:
    """A git repository at ``root`` with a first commit and ``commits_after`` more; returns
    the first commit's short hash."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=root, check=True, capture_output=True, text=True).stdout

    root.mkdir(parents=True, exist_ok=True)
    git("init", "-q")
    for i in range(1 + commits_after):
        git("commit", "-q", "--allow-empty", "-m", f"commit {i}")
        if i == 0:
            first = git("rev-parse", "--short=7", "HEAD").strip()
    return first


def publish(run, dest, **kwargs):
    repo = run.parent / "repo"
    commit = git_history(repo, 3)
    return publish_report(run, dest, profile="paper", commit=commit, date="2026-11-25",
                          machine="a machine, 2 cores", cores=2, wall_seconds=7200.0,
                          repo=repo, **kwargs)


def test_a_run_is_published_with_its_provenance_counts_costs_and_figures(tmp_path):
    made = fake_run(tmp_path / "run")
    dest = tmp_path / "docs" / "paper-profile"
    provenance = publish(tmp_path / "run", dest)
    counts = {v: made["statuses"].count(v) for v in VERDICTS}
    assert provenance["verdicts"] == counts
    assert yaml.safe_load((dest / "provenance.yaml").read_text()) == provenance
    assert (provenance["wall_minutes"], provenance["jobs"], provenance["peak_rss_mb"]) == \
        (120.0, 4, 3100.0)
    readme = (dest / "README.md").read_text()
    head = readme.splitlines()[:FIRST_SCREEN]
    commit = provenance["commit"]
    assert any(commit in line and "2026-11-25" in line and "120.0 min" in line
               for line in head)
    # how far main had moved from the run's commit when the page was written
    assert moved_mark(readme) == (commit, "2026-11-25", 3)
    assert counts_line(counts) in readme and counts_line(counts).startswith("5 rows: **2 pass**")
    # the time per paper: k-FED 9 min, the coreset 15 min, the shared data apart
    assert "| k-FED (Dennis, Li & Smith, ICML 2021) | 1 | 9.0 | 9.0 | 3,100 |" in readme
    assert "| Data sets: fetch, decode, prepare, embed (shared) | 1 | 0.5 | 0.5 | 400 |" in readme
    # every figure, with the caption the registry renders from the run's config
    assert sorted(p.name for p in (dest / "figures").glob("*.png")) == sorted(made["names"])
    assert all(f"(figures/{name})" in readme for name in made["names"])
    assert "k-FED (Dennis, Li & Smith, ICML 2021), Figure 1: accuracy" in readme
    assert (dest / "reproduction.csv").read_bytes() == \
        (tmp_path / "run" / "results" / "reproduction.csv").read_bytes()
    assert "| kfed_table2 | 1 | 540.0 |" in (dest / "rules.md").read_text()
    assert "How this run was made" not in readme and "note" not in provenance
    # published again: replaced whole, nothing half-written left beside it; a run made in two
    # segments says so
    again = publish(tmp_path / "run", dest, note="in two segments (the machine restarted).")
    assert sorted(p.name for p in dest.parent.iterdir()) == ["paper-profile"]
    assert again["note"] == "in two segments (the machine restarted)."
    assert "How this run was made: in two segments" in (dest / "README.md").read_text()


def test_figures_over_the_budget_get_a_palette_or_are_refused(tmp_path):
    made = fake_run(tmp_path / "run", noisy_pngs=True)
    sizes = [p.stat().st_size for p in (tmp_path / "run" / "figures").glob("*.png")]
    dest = tmp_path / "out"
    publish(tmp_path / "run", dest, png_budget=sum(sizes) - 1)  # over by a byte: a palette
    published = sum(p.stat().st_size for p in (dest / "figures").glob("*.png"))
    assert published < sum(sizes) and len(list((dest / "figures").glob("*.png"))) == \
        len(made["names"])
    with pytest.raises(ValueError, match=r"even with a palette: over the budget of 1,000"):
        publish(tmp_path / "run", tmp_path / "refused", png_budget=1000)
    assert not (tmp_path / "refused").exists()


def test_an_unfinished_run_is_named(tmp_path):
    (tmp_path / "run" / "results").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"reproduction.csv: the run has no "
                                                r"reproduction report \(did it finish\?\)"):
        publish(tmp_path / "run", tmp_path / "out")


def test_job_time_is_summed_per_paper_with_shared_data_and_the_report_apart():
    jobs = pd.DataFrame({"job": ["kfed/a", "kfed/b", "data/prepare_mnist", "reproduction"],
                         "seconds": [60.0, 120.0, 30.0, 1.0],
                         "peak_rss_mb": [100.0, 300.0, 50.0, np.nan]})
    costs = per_part_costs(jobs).set_index("part")
    assert list(costs.index) == ["kfed", "data", "report"]
    assert (costs.loc["kfed", "jobs"], costs.loc["kfed", "job_minutes"],
            costs.loc["kfed", "longest_minutes"], costs.loc["kfed", "peak_rss_mb"]) == \
        (2, 3.0, 2.0, 300.0)


def test_report_coverage_names_unrun_and_stale_targets():
    """What the published-report test will hold docs/paper-profile to: the targets the quick
    profile's report checks (tests/data/quick_verdicts.csv, held to the code by CI's quick
    run), no more and no fewer; skipped settings are not targets."""
    from fedclust.pipeline.publish import report_coverage, report_keys

    quick = pd.read_csv(REPO / "tests" / "data" / "quick_verdicts.csv")
    expected = report_keys(quick)
    assert "kfed.table1" in expected and not any(k.endswith(".skipped") for k in expected)
    published = quick.copy()
    assert report_coverage(published, expected) == ([], [])
    dropped = sorted(expected)[0]
    published = quick[quick["key"] != dropped].copy()
    published.loc[len(published)] = {"key": "kfed.retired_claim", "item": "x", "quantity": "y",
                                      "status": "pass"}
    published.loc[len(published) + 1] = {"key": "coreset.skipped", "item": "x", "quantity": "y",
                                         "status": "reported"}
    assert report_coverage(published, expected) == ([dropped], ["kfed.retired_claim"])


PUBLISHED = REPO / "docs" / "paper-profile"


def test_the_published_paper_profile_is_the_codes_or_says_on_its_first_screen_it_is_stale():
    """docs/paper-profile (the paper profile run end to end, committed) cannot silently go
    stale: its report checks every target the code checks (the keys of the quick profile's
    verdicts, which CI's quick run holds to the code) and no retired one, and every row it
    shares with the quick profile has the same test and the same paper side (value, range,
    spread, run count, tolerance). Otherwise its README says so on its first screen, dated,
    with the reason (``benchmarks/profiles.py --publish docs/paper-profile --stale REASON``),
    and the repository README says so beside its counts. Run the paper profile again and
    publish it (``benchmarks/profiles.py paper --publish docs/paper-profile``) to clear it."""
    from datetime import date

    from fedclust.pipeline.publish import (
        report_coverage,
        report_keys,
        stale_mark,
        verdict_counts,
    )
    from fedclust.reproduction import definition_changes

    readme = (PUBLISHED / "README.md").read_text()
    head = "\n".join((REPO / "README.md").read_text().splitlines()[:40])
    size = sum(p.stat().st_size for p in (PUBLISHED / "figures").glob("*.png"))
    assert 0 < size <= 5 * 2**20
    _check_moved_mark(readme)
    mark = stale_mark(readme)
    if mark is not None:
        day, reason = mark
        assert date.fromisoformat(day) <= date.today() and len(reason.split()) >= 5
        assert "docs/paper-profile" in head and f"stale since {day}" in " ".join(head.split())
        return
    published = pd.read_csv(PUBLISHED / "reproduction.csv")
    quick = pd.read_csv(REPO / "tests" / "data" / "quick_verdicts.csv", keep_default_na=False,
                        dtype=str)
    unrun, retired = report_coverage(published, report_keys(quick))
    assert (unrun, retired) == ([], []), \
        f"not in the published report: {unrun}; retired: {retired}"
    moved = definition_changes(published, quick)
    assert moved.empty, f"rows whose test moved since publication:\n{moved.to_string()}"
    # its README, provenance and the repository README agree on the counts
    provenance = yaml.safe_load((PUBLISHED / "provenance.yaml").read_text())
    assert provenance["profile"] == "paper" and provenance["verdicts"] == verdict_counts(
        published)
    line = counts_line(provenance["verdicts"])
    assert line in readme
    assert line in head and "docs/paper-profile" in head


def _check_moved_mark(readme: str) -> None:
    """The published README's first screen says how far main had moved from the run's commit
    when the page was written, and the count is git's: the commits from the run's to the
    parent of the commit that last wrote the page (where the checkout has that history)."""
    import subprocess

    mark = moved_mark(readme)
    provenance = yaml.safe_load((PUBLISHED / "provenance.yaml").read_text())
    assert mark is not None and mark[0] == provenance["commit"], mark

    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)

    written = git("log", "-1", "--format=%H", "--", "docs/paper-profile/README.md").stdout.strip()
    if not written or git("diff", "--quiet", "HEAD", "--", "docs/paper-profile/README.md"
                          ).returncode:
        return  # no history here, or the page is being rewritten in this checkout
    counted = git("rev-list", "--count", f"{mark[0]}..{written}^")
    if counted.returncode:
        pytest.skip(f"git cannot count from {mark[0]}: {counted.stderr.strip()}")
    assert mark[2] == int(counted.stdout), (mark, int(counted.stdout))


def test_a_stale_mark_is_dated_on_the_first_screen_and_replaced_not_repeated(tmp_path):
    from fedclust.pipeline.publish import FIRST_SCREEN, mark_stale, moved_mark, stale_mark

    commit = git_history(tmp_path / "repo", 4)
    (tmp_path / "README.md").write_text("# The paper profile\n\n| commit |\n|---|\n" +
                                        "line\n" * 20)
    (tmp_path / "provenance.yaml").write_text(f"commit: {commit}\n")
    assert stale_mark((tmp_path / "README.md").read_text()) is None
    mark_stale(tmp_path, "2026-11-28", "the verdicts became statistical tests",
               repo=tmp_path / "repo")
    mark_stale(tmp_path, "2026-11-29", "a target moved", repo=tmp_path / "repo")
    text = (tmp_path / "README.md").read_text()
    assert stale_mark(text) == ("2026-11-29", "a target moved")
    assert moved_mark(text) == (commit, "2026-11-29", 4)
    assert text.count("stale: ") == 1 and text.count("Made at ") == 1
    assert text.startswith("# The paper profile\n\nstale: ")
    assert any(line.startswith("stale: ") for line in text.splitlines()[:FIRST_SCREEN])
    with pytest.raises(ValueError, match="date YYYY-MM-DD"):
        mark_stale(tmp_path, "28 Nov", "reason")


def test_a_damaged_figure_is_named_and_never_published(tmp_path):
    from fedclust.exceptions import DamagedFileError
    from fedclust.io import sha256_of, sidecar_of

    made = fake_run(tmp_path / "run")
    figure = tmp_path / "run" / "figures" / made["names"][0]
    sidecar_of(figure).write_text(f"{sha256_of(figure)}  {figure.name}\n")
    figure.write_bytes(figure.read_bytes()[:50])  # cut short after it was drawn
    with pytest.raises(DamagedFileError, match=f"{figure}: damaged"):
        publish(tmp_path / "run", tmp_path / "docs" / "paper-profile")
    assert not figure.exists() and not (tmp_path / "docs" / "paper-profile").exists()

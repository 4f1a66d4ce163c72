"""Publish a finished run: the report a reader sees without running the pipeline.
:func:`publish_report` copies what a reader wants from a whole profile's run
(``benchmarks/profiles.py``), left in a scratch directory, into one folder of the repository
(``docs/paper-profile/`` for the paper profile); :func:`mark_stale` and
:func:`report_coverage` say how far the code has moved on since.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import yaml

from ..io import check_sidecar, write_text
from ..reproduction import VERDICTS
from .benchmarks import BENCHMARK_DIR, format_mb, read_benchmarks, render_summary, summarize

__all__ = ["publish_report", "per_part_costs", "verdict_counts", "counts_line", "PNG_BUDGET",
           "PART_TITLES", "report_keys", "report_coverage", "mark_stale", "stale_mark",
           "FIRST_SCREEN", "commits_since", "moved_mark"]

#: Lines of a published README a reader sees first: the run's provenance and a stale mark.
FIRST_SCREEN = 8

_STALE = re.compile(r"^stale: (\d{4}-\d{2}-\d{2}): (\S.*)$")
_MOVED = re.compile(r"^Made at ([0-9a-f]{7,40}); when this page was written "
                    r"\((\d{4}-\d{2}-\d{2})\), main had moved (\d+) commits? since\.$")

#: Bytes the published PNGs may take in all.
PNG_BUDGET = 5_000_000

#: How the cost table names the first folder of a job's log path.
PART_TITLES = {"kfed": "k-FED (Dennis, Li & Smith, ICML 2021)",
               "localkmeans": "LocalKMeans (2025)",
               "coreset": "Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013)",
               "fedkmeans": "Federated k-means (Triebe & Rajagopal, 2019)",
               "comparison": "Cross-paper comparison",
               "data": "Data sets: fetch, decode, prepare, embed (shared)"}


def report_keys(report: pd.DataFrame) -> set[str]:
    """The targets a report's rows check (its ``key`` column), rows of skipped settings
    (``<section>.skipped``: not targets) left out."""
    return {str(k) for k in report["key"].dropna() if str(k) and not str(k).endswith(".skipped")}


def report_coverage(report: pd.DataFrame, expected) -> tuple[list[str], list[str]]:
    """A published report's targets against ``expected``, the targets the code checks today
    (the keys of ``tests/data/quick_verdicts.csv``, which CI's quick run holds to the code:
    every profile checks the same targets, at its own scale).

    Returns
    -------
    unrun : list of str
        Expected targets no row of the report checks.
    stale : list of str
        Targets of the report that the code no longer checks.
    """
    keys, expected = report_keys(report), set(expected)
    return sorted(expected - keys), sorted(keys - expected)


def commits_since(commit: str, repo: Path | str = ".") -> int:
    """How many commits ``HEAD`` of the git checkout ``repo`` is ahead of ``commit``."""
    out = subprocess.run(["git", "rev-list", "--count", f"{commit}..HEAD"], cwd=repo,
                         capture_output=True, text=True)
    if out.returncode:
        raise ValueError(f"git cannot count the commits since {commit} in {repo}: "
                         f"{out.stderr.strip()}")
    return int(out.stdout)


def _moved_line(commit: str, date: str, repo: Path | str = ".") -> str:
    count = commits_since(commit, repo)
    return (f"Made at {commit}; when this page was written ({date}), main had moved {count} "
            f"commit{'' if count == 1 else 's'} since.")


def _on_first_screen(readme: str, pattern: re.Pattern) -> re.Match | None:
    """The first of a README's first :data:`FIRST_SCREEN` lines that ``pattern`` matches."""
    for line in readme.splitlines()[:FIRST_SCREEN]:
        match = pattern.match(line.strip())
        if match:
            return match
    return None


def moved_mark(readme: str) -> tuple[str, str, int] | None:
    """``(commit, date, commits)`` of a published README's line saying how far main had moved
    from the run's commit when the page was written (among its first :data:`FIRST_SCREEN`
    lines), or ``None``."""
    match = _on_first_screen(readme, _MOVED)
    return None if match is None else (match.group(1), match.group(2), int(match.group(3)))


def stale_mark(readme: str) -> tuple[str, str] | None:
    """``(date, reason)`` of a published README's stale mark (a line ``stale: YYYY-MM-DD:
    reason`` among its first :data:`FIRST_SCREEN` lines), or ``None``."""
    match = _on_first_screen(readme, _STALE)
    return None if match is None else (match.group(1), match.group(2))


def mark_stale(dest: Path, date: str, reason: str, *, commit: str | None = None,
               repo: Path | str = ".") -> None:
    """Say on the first screen of the report published in ``dest`` that the code has moved
    on since the run (``stale: date: reason``, replacing an earlier mark) and how many commits
    main has moved since the run's ``commit`` (by default the one in ``provenance.yaml``):
    until the profile is run and published again, the tests read it instead of failing on
    the difference."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) or not reason.strip():
        raise ValueError(f"a stale mark needs a date YYYY-MM-DD and a reason; got {date!r}, "
                         f"{reason!r}")
    readme = Path(dest) / "README.md"
    if commit is None:
        commit = yaml.safe_load((Path(dest) / "provenance.yaml").read_text())["commit"]
    lines = [line for line in readme.read_text().splitlines()
             if not _STALE.match(line) and not _MOVED.match(line)]
    while len(lines) > 2 and lines[1] == lines[2] == "":
        del lines[1]
    at = 1 if lines and lines[0].startswith("# ") else 0
    lines[at:at] = ["", f"stale: {date}: {' '.join(reason.split())}", "",
                    _moved_line(commit, date, repo)]
    write_text("\n".join(lines).rstrip("\n") + "\n", readme)


def verdict_counts(report: pd.DataFrame) -> dict[str, int]:
    """Rows of each verdict, in the order of :data:`fedclust.reproduction.VERDICTS`."""
    counts = report["status"].value_counts()
    unknown = set(counts.index) - set(VERDICTS)
    if unknown:
        raise ValueError(f"reproduction report: unknown verdicts {sorted(unknown)}")
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def counts_line(counts: dict[str, int]) -> str:
    """``265 rows: **97 pass**, ...``: the counts as the reports print them."""
    return (f"{sum(counts.values())} rows: "
            + ", ".join(f"**{n} {v}**" for v, n in counts.items()))


def per_part_costs(jobs: pd.DataFrame) -> pd.DataFrame:
    """Job time per paper (the first folder of a job's log path; shared data preparation and
    the report's own jobs apart): jobs, job minutes, longest job, peak memory of one job."""
    part = jobs["job"].str.split("/").str[0]
    part = part.where(part.isin(list(PART_TITLES)), "report")
    table = jobs.assign(part=part).groupby("part").agg(
        jobs=("job", "size"), job_minutes=("seconds", lambda s: s.sum() / 60),
        longest_minutes=("seconds", lambda s: s.max() / 60),
        peak_rss_mb=("peak_rss_mb", "max")).reset_index()
    order = {name: i for i, name in enumerate([*PART_TITLES, "report"])}
    return table.sort_values("part", key=lambda s: s.map(order), ignore_index=True)


def _cost_lines(costs: pd.DataFrame, cores: int) -> list[str]:
    lines = ["| part | jobs | job time (min) | longest job (min) | peak memory of a job (MB) |",
             "|---|---|---|---|---|"]
    for r in costs.itertuples():
        title = PART_TITLES.get(r.part, "report: gather, claims, figures' captions, summary")
        lines.append(f"| {title} | {r.jobs} | {r.job_minutes:.1f} | {r.longest_minutes:.1f} | "
                     f"{format_mb(r.peak_rss_mb)} |")
    total = costs["job_minutes"].sum()
    lines += ["", f"Job time is summed over jobs, measured with `--cores {cores}`. On N cores "
              f"a part cannot take less wall time than its job time / N nor than its longest "
              f"job (bounds, not measurements; the whole run: {total:.0f} min of job time)."]
    return lines


def _palette_png(data: bytes) -> bytes:
    """The image with a 256-colour palette: line plots lose nothing visible, a third of the
    bytes or less."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        out = io.BytesIO()
        image.convert("RGB").quantize(colors=256).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _copy_figures(figures: Path, dest: Path, budget: int) -> list[str]:
    pngs = sorted(figures.glob("*.png"))
    if not pngs:
        raise FileNotFoundError(f"{figures}: no PNG figures to publish")
    for png in pngs:  # a damaged figure is named and removed, never published
        check_sidecar(png)
    blobs = {p.name: p.read_bytes() for p in pngs}
    if sum(map(len, blobs.values())) > budget:
        blobs = {name: _palette_png(data) for name, data in blobs.items()}
    total = sum(map(len, blobs.values()))
    if total > budget:
        raise ValueError(f"the {len(blobs)} figures take {total:,} bytes even with a palette: "
                         f"over the budget of {budget:,}")
    dest.mkdir(parents=True)
    for name, data in blobs.items():
        (dest / name).write_bytes(data)
    return sorted(blobs)


def publish_report(run: Path, dest: Path, *, profile: str, commit: str, date: str,
                   machine: str, cores: int, wall_seconds: float,
                   png_budget: int = PNG_BUDGET, note: str | None = None,
                   repo: Path | str = ".") -> dict:
    """Copy a finished run's report, figures and time per rule from ``run`` (the directory it
    ran in) into ``dest`` (replaced whole), with the run's provenance at the top (``note``:
    how the run was made, when not in one go by ``benchmarks/profiles.py``) and how many
    commits the git checkout ``repo`` is ahead of the run's ``commit``. ``dest`` then holds

    * ``README.md``: the commit, date, machine, cores and wall time at the top, the verdict
      counts, the time and memory per paper and per rule, and every figure;
    * ``reproduction.md`` and ``reproduction.csv``: the run's report, unchanged;
    * ``rules.md``: the time and memory of every rule (Snakemake's ``benchmark:`` files);
    * ``figures/*.png``: the run's figures, re-encoded with a 256-colour palette when the PNGs
      would exceed ``png_budget`` bytes (the PDFs stay in the run);
    * ``provenance.yaml``: the same header, machine-readable (the tests read it).

    Returns
    -------
    dict
        The provenance written to ``dest/provenance.yaml``.
    """
    run, dest = Path(run), Path(dest)
    report_csv = run / "results" / "reproduction.csv"
    if not report_csv.exists():
        raise FileNotFoundError(f"{report_csv}: the run has no reproduction report (did it "
                                f"finish?)")
    report = pd.read_csv(report_csv)
    jobs = read_benchmarks(run / BENCHMARK_DIR)
    summary = summarize(jobs)
    counts = verdict_counts(report)
    provenance = {"profile": profile, "commit": commit, "date": date, "machine": machine,
                  "cores": int(cores), "wall_minutes": round(wall_seconds / 60, 1),
                  "jobs": int(len(jobs)),
                  "job_minutes": round(float(jobs["seconds"].sum()) / 60, 1),
                  "peak_rss_mb": float(jobs["peak_rss_mb"].max()), "verdicts": counts}
    if note:
        provenance["note"] = note
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    figures = _copy_figures(run / "figures", staging / "figures", png_budget)
    shutil.copy(report_csv, staging / "reproduction.csv")
    shutil.copy(run / "results" / "reproduction.md", staging / "reproduction.md")
    write_text(render_summary(summary, profile), staging / "rules.md")
    write_text(yaml.safe_dump(provenance, sort_keys=False), staging / "provenance.yaml")
    captions = _captions(run / "results" / "run_config.yaml", figures)
    write_text(_readme(provenance, per_part_costs(jobs), summary, captions,
                       _moved_line(commit, date, repo)), staging / "README.md")
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
    return provenance


def _captions(run_config: Path, figures: list[str]) -> dict[str, str]:
    """Every figure's caption, rendered by the registry from the config the run used."""
    from .registry import figure_caption, figure_names

    config = yaml.safe_load(run_config.read_text())["config"]
    captions = {}
    for paper_key, names in figure_names(config).items():
        for name in names:
            captions[f"{paper_key}_{name}.png"] = figure_caption(paper_key, name, config)
    unknown = sorted(set(figures) - set(captions))
    if unknown:
        raise ValueError(f"figures no paper of the registry declares under the run's config "
                         f"({run_config}): {unknown}")
    return {name: captions[name] for name in figures}


def _readme(prov: dict, costs: pd.DataFrame, summary: pd.DataFrame,
            captions: dict[str, str], moved: str) -> str:
    slowest = summary.iloc[0]
    lines = [
        f"# The {prov['profile']} profile, run end to end", "", moved, "",
        "| commit | date | machine | cores | wall time | jobs | job time | peak memory of a "
        "job |", "|---|---|---|---|---|---|---|---|",
        f"| {prov['commit']} | {prov['date']} | {prov['machine']} | {prov['cores']} | "
        f"{prov['wall_minutes']:.1f} min | {prov['jobs']} | {prov['job_minutes']:.1f} min | "
        f"{format_mb(prov['peak_rss_mb'])} MB |", "",
        (f"How this run was made: {prov['note']} Nothing here is edited by hand."
         if prov.get("note") else
         f"One run from a clean directory: `python benchmarks/profiles.py {prov['profile']} "
         f"--cores {prov['cores']} --data-mirror ../shared/data` (Snakemake with "
         f"`--cores {prov['cores']}`). Nothing here is edited by hand."), "",
        "## Verdicts", "", counts_line(prov["verdicts"]) + ".", "",
        "Every row with the paper's number, ours, the band and the measured reason of each "
        "miss: [reproduction.md](reproduction.md) ([CSV](reproduction.csv)).", "",
        "## Time and memory", "", *_cost_lines(costs, prov["cores"]), "",
        f"Per rule: [rules.md](rules.md) (the slowest rule: `{slowest['rule']}`, "
        f"{slowest['total_seconds'] / 60:.1f} min over {int(slowest['jobs'])} jobs).", "",
        "## Figures", "",
        f"{len(captions)} figures (PNG; the run also writes PDFs), each with the caption the "
        f"pipeline renders from the run's config (its settings and every stated difference "
        f"from the paper).", ""]
    for name, caption in captions.items():
        lines += [f"### {Path(name).stem}", "", f"![{Path(name).stem}](figures/{name})", "",
                  caption, ""]
    return "\n".join(lines)

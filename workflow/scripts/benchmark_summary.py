"""Summarize every job's benchmark file per rule: results/benchmarks/summary.{csv,md}."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table, write_text
from fedclust.pipeline.benchmarks import read_benchmarks, render_summary, summarize
from fedclust.pipeline.job import job

with job(snakemake) as log:
    # the summary sits in the benchmark directory it summarizes
    summary = summarize(read_benchmarks(Path(snakemake.output.csv).parent))
    write_table(summary, snakemake.output.csv)
    write_text(render_summary(summary, snakemake.params.profile), snakemake.output.md)
    log.info("%d rules, %.0f s of job time", len(summary), summary["total_seconds"].sum())

"""Gather the c_rs of every k, summarize per k and choose k (largest share above c0)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import concat_tables, read_table, write_table
from fedclust.papers.kfed.separation import summarize_separation
from fedclust.pipeline.job import job

with job(snakemake) as log:
    parts = list(snakemake.input)
    pairs = concat_tables([read_table(p, required=("n_clusters", "value")) for p in parts], parts)
    summary, chosen = summarize_separation(pairs, snakemake.params.threshold)
    write_table(pairs, snakemake.output.pairs)
    write_table(summary, snakemake.output.summary)
    write_table(chosen, snakemake.output.chosen)
    log.info("chosen k = %d (share of pairs above %.2f: %.3f)", chosen["n_clusters"].iloc[0],
             snakemake.params.threshold, chosen["share_above"].iloc[0])

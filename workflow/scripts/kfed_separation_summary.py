"""Gather the c_rs of every k, summarize per k and choose k (largest share above c0)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.experiments.separation import choose_k, separation_summary
from fedclust.io import log_to_file, read_table, write_table

log = log_to_file(snakemake.log[0])
pairs = pd.concat([read_table(p, required=("n_clusters", "value")) for p in snakemake.input],
                  ignore_index=True)
summary = choose_k(separation_summary(pairs, snakemake.params.threshold))
write_table(pairs, snakemake.output.pairs)
write_table(summary, snakemake.output.summary)
write_table(summary[summary["chosen"]].drop(columns="chosen"), snakemake.output.chosen)
chosen = summary[summary["chosen"]].iloc[0]
log.info("chosen k = %d (share of pairs above %.2f: %.3f)", chosen["n_clusters"],
         snakemake.params.threshold, chosen["share_above"])

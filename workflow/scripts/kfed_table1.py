"""Render k-FED's Table 1 (Markdown) from its results table and the paper's values."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import read_table, write_text
from fedclust.papers.kfed.figures import table1_report
from fedclust.pipeline.job import job
from fedclust.reproduction import load_targets

with job(snakemake) as log:
    runs = read_table(snakemake.input.runs, required=("n_features", "n_clusters", "metric",
                                                      "value"))
    write_text(table1_report(runs, load_targets(snakemake.input.targets)), snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])

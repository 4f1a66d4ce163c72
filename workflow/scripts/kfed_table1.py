"""Render k-FED's Table 1 (Markdown) from its results table and the paper's values."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.io import atomic_path, log_to_file, read_table
from fedclust.plots.kfed import table1_markdown
from fedclust.reproduction import load_targets

log = log_to_file(snakemake.log[0])
runs = read_table(snakemake.input.runs, required=("n_features", "n_clusters", "metric", "value"))
spec = load_targets(snakemake.input.targets)["kfed"]["table1"]
paper = pd.DataFrame(spec["rows"]).rename(columns={"value": "paper_value"})
text = (
    "# k-FED, Table 1: accuracy on Gaussian mixtures\n\n"
    + table1_markdown(runs, paper)
    + "\nPaper values: " + spec["provenance"] + "\n"
)
with atomic_path(snakemake.output[0]) as tmp:
    Path(tmp).write_text(text)
log.info("wrote %s", snakemake.output[0])

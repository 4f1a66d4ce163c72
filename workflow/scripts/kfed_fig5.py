"""Draw k-FED's Figure 5 (c_rs distribution on MNIST) from its results tables."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table
from fedclust.plots._style import save_figure
from fedclust.plots.kfed import plot_separation_distribution

log = log_to_file(snakemake.log[0])
pairs = read_table(snakemake.input.pairs, required=("n_clusters", "value"))
summary = read_table(snakemake.input.summary, required=("n_clusters", "share_above", "chosen"))
fig = plot_separation_distribution(pairs, summary, threshold=snakemake.params.threshold)
save_figure(fig, snakemake.output.png, snakemake.output.pdf)
log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

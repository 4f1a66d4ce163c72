"""Draw k-FED's Figure 1 (accuracy vs separation) from its results table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table
from fedclust.plots._style import save_figure
from fedclust.plots.kfed import plot_accuracy_vs_separation

log = log_to_file(snakemake.log[0])
runs = read_table(snakemake.input[0], required=("separation", "metric", "value"))
save_figure(plot_accuracy_vs_separation(runs), snakemake.output.png, snakemake.output.pdf)
log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

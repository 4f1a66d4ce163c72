"""Draw one k-FED figure from its results table(s)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table
from fedclust.plots import kfed as plots
from fedclust.plots._style import save_figure

log = log_to_file(snakemake.log[0])
figure = snakemake.wildcards.figure
tables = [read_table(path) for path in snakemake.input]
if figure.startswith("fig5_separation_"):
    fig = plots.plot_separation_distribution(*tables, threshold=snakemake.params.threshold)
else:
    draw = {
        "fig1_accuracy_vs_separation": plots.plot_accuracy_vs_separation,
        "fig2_structured_vs_iid": plots.plot_structured_vs_iid,
        "fig3_kfed_vs_distributed_lloyd": plots.plot_kfed_vs_distributed_lloyd,
        "participation": plots.plot_participation,
        "new_devices": plots.plot_new_devices,
        "heterogeneity": plots.plot_heterogeneity,
    }[figure]
    fig = draw(*tables)
save_figure(fig, snakemake.output.png, snakemake.output.pdf)
log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

"""Draw one LocalKMeans figure from its results table."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import log_to_file, read_table
from fedclust.plots._style import save_figure
from fedclust.plots.localkmeans import plot_final_sweeps, plot_trajectories

log = log_to_file(snakemake.log[0])
figure = snakemake.wildcards.lkm_figure
runs = read_table(snakemake.input[0], required=("metric", "value"))
if figure == "fig1_misclustering":
    fig = plot_trajectories(runs, metric="misclustering", rows="snr", cols="init",
                            ylabel="misclustering rate",
                            title="LocalKMeans on Gaussian mixtures")
elif figure == "fig2_misclustering_real":
    fig = plot_trajectories(runs, metric="misclustering", cols="dataset",
                            ylabel="misclustering rate", title="LocalKMeans on real data")
elif figure == "fig3_objective_real":
    fig = plot_trajectories(runs, metric="objective / centralized", cols="dataset",
                            ylabel="k-means objective / centralized Lloyd's final",
                            title="LocalKMeans on real data: k-means objective")
else:
    fig = plot_final_sweeps(runs)
save_figure(fig, snakemake.output.png, snakemake.output.pdf)
log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

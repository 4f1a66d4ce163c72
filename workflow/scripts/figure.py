"""Draw one figure: its plotting function (params.plot, "module:function", declared in the
paper's module of fedclust.pipeline) called on its results tables."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import read_table
from fedclust.pipeline.job import job
from fedclust.plots._style import save_figure
from fedclust.vocabulary import resolve

with job(snakemake) as log:
    plot = resolve(snakemake.params.plot)
    log.info("drawing with %s from %s", snakemake.params.plot, ", ".join(snakemake.input))
    fig = plot(*(read_table(path) for path in snakemake.input), **snakemake.params.options)
    save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

"""Draw one figure (declared in fedclust.pipeline.registry) from its results tables."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import read_table
from fedclust.pipeline import registry
from fedclust.pipeline.job import job
from fedclust.plots._style import save_figure

with job(snakemake) as log:
    tables = [read_table(path) for path in snakemake.input]
    fig = registry.draw(snakemake.wildcards.paper, snakemake.wildcards.figure, tables,
                        snakemake.config)
    save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

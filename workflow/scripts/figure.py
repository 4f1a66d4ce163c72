"""Draw one figure: its plotting function (params.plot, "module:function": the function named
as the figure in the paper's figures module) called on its results tables."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import read_table
from fedclust.pipeline.job import job
from fedclust.plots._style import layout_problems, save_figure
from fedclust.vocabulary import resolve

with job(snakemake) as log:
    plot = resolve(snakemake.params.plot)
    log.info("drawing with %s from %s", snakemake.params.plot, ", ".join(snakemake.input))
    fig = plot(*(read_table(path) for path in snakemake.input), **snakemake.params.options)
    # what does not read (overlapping labels, a legend over data, small legend text) is
    # logged, never fatal: tests/test_quick_profile.py fails a run whose figure logs hold any
    for problem in layout_problems(fig):
        log.warning("layout problem: %s", problem)
    save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log.info("wrote %s and %s", snakemake.output.png, snakemake.output.pdf)

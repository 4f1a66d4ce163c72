"""Cross-paper comparison: every algorithm from the natural partition to IID -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.comparison.experiments import heterogeneity_sweep, load_data
from fedclust.pipeline.job import job

with job(snakemake) as log:
    dataset, settings = snakemake.wildcards.dataset, snakemake.params.settings
    X, classes, natural, title = load_data(dataset, snakemake.input[0], settings,
                                           base_seed=snakemake.params.seed)
    log.info("%s: %s rows x %s features, k=%d", title, *X.shape, settings["n_clusters"])
    table = heterogeneity_sweep(X, classes, natural, dataset=dataset, cfg=settings,
                                n_clusters=settings["n_clusters"],
                                base_seed=snakemake.params.seed)
    table.insert(1, "data_title", title)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

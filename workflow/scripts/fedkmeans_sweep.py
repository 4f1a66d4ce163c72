"""Federated k-means, Figs 1-5: one hyper-parameter sweep, or every sweep in one job
(fedkmeans.batch_sweeps) -> a tidy CSV per sweep."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.fedkmeans.experiments import sweep_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    if hasattr(snakemake.params, "specs"):
        specs = snakemake.params.specs
        outputs = dict(zip(specs, snakemake.output, strict=True))
    else:
        specs = {snakemake.wildcards.sweep: snakemake.params.spec}
        outputs = {snakemake.wildcards.sweep: snakemake.output[0]}
    for sweep, spec in specs.items():
        log.info("sweep %s: %s", sweep, spec)
        table = sweep_runs(sweep, spec, snakemake.params.settings,
                           base_seed=snakemake.params.seed)
        write_table(table, outputs[sweep])
        log.info("wrote %d rows to %s", len(table), outputs[sweep])

"""k-FED Figure 4: one client-selection strategy on one data set -> history and per-device
tables."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table

# imports torch before the job sets its thread count
from fedclust.papers.kfed.applications import fig4_data, fig4_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    dataset, strategy = snakemake.wildcards.dataset, snakemake.wildcards.strategy
    cfg, seed = snakemake.params.settings, snakemake.params.seed
    data = fig4_data(dataset, snakemake.input[0], cfg, snakemake.params.dataset_settings,
                     base_seed=seed)
    log.info("%s: %d devices, %d training and %d test rows", dataset, data.n_devices,
             len(data.y), len(data.test_y))
    history, devices = fig4_runs(dataset, strategy, data, cfg, base_seed=seed)
    write_table(history, snakemake.output.history)
    write_table(devices, snakemake.output.devices)
    log.info("wrote %s and %s", snakemake.output.history, snakemake.output.devices)

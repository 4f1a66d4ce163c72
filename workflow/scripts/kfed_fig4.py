"""k-FED Figure 4: one client-selection strategy on one data set, or every strategy
(kfed.fig4.batch_strategies), -> history and per-device tables."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table

# imports torch before the job sets its thread count
from fedclust.papers.kfed.applications import fig4_data, fig4_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    dataset, cfg = snakemake.wildcards.dataset, snakemake.params.settings
    seed = snakemake.params.seed
    if hasattr(snakemake.params, "strategies"):
        strategies = snakemake.params.strategies
        outputs = list(zip(snakemake.output.history, snakemake.output.devices, strict=True))
    else:
        strategies = [snakemake.wildcards.strategy]
        outputs = [(snakemake.output.history, snakemake.output.devices)]
    data = fig4_data(dataset, snakemake.input[0], cfg, snakemake.params.dataset_settings,
                     base_seed=seed)
    log.info("%s: %d devices, %d training and %d test rows", dataset, data.n_devices,
             len(data.y), len(data.test_y))
    for strategy, (history_path, devices_path) in zip(strategies, outputs, strict=True):
        history, devices = fig4_runs(dataset, strategy, data, cfg, base_seed=seed)
        write_table(history, history_path)
        write_table(devices, devices_path)
        log.info("wrote %s and %s", history_path, devices_path)

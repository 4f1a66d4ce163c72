"""k-FED Table 2: one cell (Z devices, k', method), or every cell together, -> tidy CSVs."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

# imports torch before the job sets its thread count
from fedclust.data.mnist import load_mnist
from fedclust.io import write_table
from fedclust.papers.kfed.applications import table2_cells, table2_runs
from fedclust.pipeline.job import job

with job(snakemake) as log:
    root = Path(snakemake.input[0]).parent
    train, test = load_mnist(root, "train"), load_mnist(root, "test")
    settings, seed = snakemake.params.settings, snakemake.params.seed
    if hasattr(snakemake.params, "cells"):
        tables = table2_cells(train, test, cells=snakemake.params.cells, cfg=settings,
                              base_seed=seed)
        outputs = dict(zip(tables, snakemake.output, strict=True))
    else:
        w = snakemake.wildcards
        cell = (int(w.n_devices), int(w.device_clusters), w.method)
        tables = {cell: table2_runs(train, test, n_devices=cell[0], device_clusters=cell[1],
                                    method=cell[2], cfg=settings, base_seed=seed)}
        outputs = {cell: snakemake.output[0]}
    for cell, table in tables.items():
        write_table(table, outputs[cell])
        log.info("wrote %d rows to %s", len(table), outputs[cell])

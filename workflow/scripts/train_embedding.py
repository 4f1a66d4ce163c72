"""Train a small CNN (on torch_device) and write its embeddings as a data set (Figs 2-3)."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import torch  # noqa: F401  (loaded first, so that the job limits its threads)

from fedclust.data.prepared import embed, write_prepared
from fedclust.io import write_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    data, summary = embed(snakemake.wildcards.dataset, list(snakemake.input),
                          snakemake.params.settings, seed=snakemake.params.seed,
                          device=snakemake.params.device)
    write_prepared(data, snakemake.output.features)
    write_table(summary, snakemake.output.summary)
    log.info("%s -> %s", data.description, snakemake.output.features)

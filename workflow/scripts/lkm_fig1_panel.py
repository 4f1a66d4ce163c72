"""LocalKMeans Figure 1, one panel (one SNR, one initialization) -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.io import write_table
from fedclust.papers.localkmeans.declare import init_of_file_name
from fedclust.papers.localkmeans.experiments import fig1_panel
from fedclust.pipeline.job import job

with job(snakemake) as log:
    table = fig1_panel(snakemake.params.synthetic, snakemake.params.settings,
                       snr=float(snakemake.wildcards.snr),
                       init=init_of_file_name(snakemake.wildcards.init),
                       base_seed=snakemake.params.seed)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

"""Write the path, size and sha256 of every data file the run read."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.io import write_table
from fedclust.pipeline import data
from fedclust.pipeline.job import job

with job(snakemake) as log:
    rows = data.data_checksums(snakemake.config)
    write_table(pd.DataFrame(rows, columns=["file", "bytes", "sha256"]), snakemake.output[0])
    log.info("wrote %d files' checksums to %s", len(rows), snakemake.output[0])

"""The Snakemake pipeline's side of the library: what it produces, from which data, how jobs
run.

* :mod:`~fedclust.pipeline.registry` -- each paper's figures, gathered tables and claims,
  declared once (:mod:`~fedclust.pipeline.kfed`, :mod:`~fedclust.pipeline.localkmeans`);
* :mod:`~fedclust.pipeline.data` -- the data sets, their sources and file names;
* :mod:`~fedclust.pipeline.config` -- validation of the config with the schema's defaults;
* :mod:`~fedclust.pipeline.job` -- logging, threads and error reporting of every script.
* :mod:`~fedclust.pipeline.schedule` -- a profile's wall time on N cores, planned from a
  finished run's job times over the current job graph.

The Snakefile imports this package at parse time: nothing here imports the numerical stack
until a job calls it.
"""

#: The only folders the pipeline writes to (besides Snakemake's own .snakemake/).
OUTPUT_FOLDERS = ("data", "results", "figures")

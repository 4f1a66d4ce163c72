"""The Snakemake pipeline's side of the library -- what it produces, from which data, how jobs
run: each paper's figures, tables and claims (:mod:`~fedclust.pipeline.registry`), the data
sets' sources and files (:mod:`~fedclust.pipeline.data`), the config's validation
(:mod:`~fedclust.pipeline.config`), every script's logs, threads and errors
(:mod:`~fedclust.pipeline.job`) and a profile's planned wall time
(:mod:`~fedclust.pipeline.schedule`). The Snakefile imports this package at parse time: nothing
here imports the numerical stack until a job calls it.
"""

#: The only folders the pipeline writes to (besides Snakemake's own .snakemake/).
OUTPUT_FOLDERS = ("data", "results", "figures")

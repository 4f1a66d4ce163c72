"""The Flower runs (issue 29): every algorithm on a SuperLink and N SuperNodes started on this
machine, with and without a SuperNode killed mid-fit -> one tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.io import write_table
from fedclust.pipeline.job import job

with job(snakemake) as log:
    from fedclust.runtime.flower import KILL_BEFORE, run_and_measure

    settings = snakemake.params.settings
    tables = []
    for algorithm in settings["algorithms"]:
        for killed in [None, *settings["kill_devices"]]:
            kill = None if killed is None else {"device": killed, **KILL_BEFORE[algorithm]}
            log.info("%s on %d SuperNodes%s", algorithm, settings["nodes"],
                     "" if kill is None else f", device {killed} killed")
            table = run_and_measure(algorithm, n_devices=settings["nodes"],
                                    random_state=snakemake.params.seed, kill=kill,
                                    round_timeout=settings["round_timeout"])
            tables.append(table)
    table = pd.concat(tables, ignore_index=True)
    write_table(table, snakemake.output[0])
    log.info("wrote %d rows to %s", len(table), snakemake.output[0])

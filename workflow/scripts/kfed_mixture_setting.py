"""All runs of one (d, k) setting of k-FED's Table 1 or Figure 1 -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.experiments.kfed_synthetic import run_mixture_grid
from fedclust.io import log_to_file, write_table

log = log_to_file(snakemake.log[0])
cfg = snakemake.params.settings
experiment = snakemake.wildcards.mixture_experiment
separations = [cfg["separation"]] if experiment == "table1" else cfg["separations"]
log.info("%s d=%s k=%s: %d separations x %d runs", experiment, snakemake.wildcards.d,
         snakemake.wildcards.k, len(separations), cfg["runs"])
table = run_mixture_grid(
    experiment=experiment,
    n_features=int(snakemake.wildcards.d),
    n_clusters=int(snakemake.wildcards.k),
    device_clusters=cfg["device_clusters"],
    devices_per_cluster=cfg["devices_per_cluster"],
    separations=separations,
    samples_per_cluster=cfg["samples_per_cluster"],
    runs=cfg["runs"],
    base_seed=snakemake.params.seed,
    server_lloyd_rounds=cfg.get("server_lloyd_rounds", 1),
)
write_table(table, snakemake.output[0])
log.info("wrote %d rows to %s", len(table), snakemake.output[0])

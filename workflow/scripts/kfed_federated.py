"""One k-FED experiment on real federated data (Fig 2, Fig 3 or beyond the paper) -> tidy CSV."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import pandas as pd

from fedclust.experiments import kfed_federated as exp
from fedclust.experiments.datasets import read_prepared
from fedclust.experiments.kfed_synthetic import device_clusters_for
from fedclust.experiments.separation import read_oracle
from fedclust.io import log_to_file, write_table

log = log_to_file(snakemake.log[0])
experiment = snakemake.params.experiment
cfg = snakemake.params.settings
data = read_prepared(snakemake.input.features)
oracle_paths = [snakemake.input.oracles] if isinstance(snakemake.input.oracles, str) else \
    list(snakemake.input.oracles)
if experiment == "fig3":
    k = int(snakemake.wildcards.k)
elif cfg["n_clusters"] == "chosen":
    k = int(pd.read_csv(snakemake.input.chosen)["n_clusters"].iloc[0])
else:
    k = int(cfg["n_clusters"])
path = next(p for p in oracle_paths if Path(p).stem == f"k{k}")
labels, centers, attrs = read_oracle(path)
oracle = exp.Oracle(labels, centers, attrs["cost"])
log.info("%s on %s: oracle k=%d (cost %.6g), %s", experiment, data.description, k,
         oracle.cost, cfg)

common = dict(runs=cfg["runs"], base_seed=snakemake.params.seed, dataset=data.name)
if experiment in ("fig2", "fig3"):
    grid = [kp for kp in cfg["device_clusters"] if kp <= k]
    if not grid:
        raise ValueError(f"kfed.{experiment}.device_clusters has no k' <= k={k}")
if experiment == "fig2":
    table = exp.structured_vs_iid(data.X, oracle, device_clusters_grid=grid,
                                  devices_per_group=cfg["devices_per_group"], **common)
elif experiment == "fig3":
    table = exp.kfed_vs_distributed_lloyd(
        data.X, oracle, device_clusters_grid=grid, devices_per_group=cfg["devices_per_group"],
        partition=cfg.get("partition", "structured"), max_iter=cfg.get("max_iter", 300),
        **common)
else:
    k_prime = device_clusters_for(k, cfg["device_clusters"])
    if experiment == "participation":
        table = exp.participation_sweep(data.X, oracle, device_clusters=k_prime,
                                        devices_per_group=cfg["devices_per_group"],
                                        participations=cfg["fractions"], **common)
    elif experiment == "new_devices":
        table = exp.new_devices_vs_refit(data.X, oracle, device_clusters=k_prime,
                                         devices_per_group=cfg["devices_per_group"],
                                         held_out_fractions=cfg["held_out"], **common)
    elif experiment == "heterogeneity":
        if not data.has_devices:
            raise ValueError(f"{data.name} has no natural partition for kfed.heterogeneity")
        table = exp.heterogeneity_sweep(data.X, data.devices, oracle, device_clusters=k_prime,
                                        mix_fractions=cfg["mix_fractions"], **common)
    else:
        raise ValueError(f"unknown experiment {experiment!r}")
table.insert(1, "data", data.description)  # what the numbers were computed on
write_table(table, snakemake.output[0])
log.info("wrote %d rows to %s", len(table), snakemake.output[0])

"""LocalKMeans on the synthetic model: one Figure 1 panel or one Figure 4 sweep -> tidy CSV."""

import _bootstrap  # noqa: F401  (puts src/ on sys.path)

from fedclust.experiments._seeds import run_seed
from fedclust.experiments.localkmeans import final_error_sweep, synthetic_factory, trajectory_runs
from fedclust.io import log_to_file, write_table

log = log_to_file(snakemake.log[0])
syn = snakemake.params.synthetic
cfg = snakemake.params.settings
seed = snakemake.params.seed
K, d, M, per = (syn["n_clusters"], syn["n_features"], syn["n_machines"],
                syn["samples_per_machine"])
T = syn["n_iter"]
perturbation = syn.get("perturbation", 0.3)

if snakemake.rule == "lkm_fig1_panel":
    snr = float(snakemake.wildcards.snr)
    init = {"kmeanspp": "k-means++", "perturbed": "perturbed"}[snakemake.wildcards.init]
    log.info("Figure 1 panel: SNR %s, init %s, K=%d d=%d M=%d x %d, T=%d", snr, init, K, d, M,
             per, T)
    table = trajectory_runs(
        X_factory=synthetic_factory(K, d, M * per, snr), local_steps=cfg["local_steps"],
        n_iter=T, n_machines=M, trials=cfg["trials"],
        base_seed=run_seed(seed, int(round(snr * 1000)), 0 if init == "k-means++" else 1),
        init=init, perturbation=perturbation,
        keys={"n_clusters": K, "n_features": d, "snr": snr})
else:
    sweep = snakemake.wildcards.sweep
    snr0, total = cfg.get("sweep_snr", 3.01), cfg.get("total_samples", 4000)

    def make_setting(value):
        if sweep == "snr":
            return synthetic_factory(K, d, M * per, value), M, {"n_clusters": K, "n_machines": M}
        if sweep == "n_clusters":
            dim = max(d, value)
            return (synthetic_factory(value, dim, M * per, snr0), M,
                    {"snr": snr0, "n_machines": M})
        return (synthetic_factory(K, d, total, snr0), value, {"snr": snr0, "n_clusters": K})

    log.info("Figure 4 sweep over %s: %s", sweep, cfg[sweep])
    table = final_error_sweep(parameter=sweep, values=cfg[sweep], make_setting=make_setting,
                              local_steps=cfg["local_steps"], n_iter=T, trials=cfg["trials"],
                              base_seed=run_seed(seed, {"snr": 0, "n_clusters": 1,
                                                        "n_machines": 2}[sweep]),
                              init=cfg.get("init", "k-means++"), perturbation=perturbation)
write_table(table, snakemake.output[0])
log.info("wrote %d rows to %s", len(table), snakemake.output[0])

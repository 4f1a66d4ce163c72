# Federated k-means (Triebe & Rajagopal, 2019): the rules that compute its tables. Its
# figures, gathered tables and claims are declared in fedclust.papers.fedkmeans.declare.


if fedkmeans_declare.sweeps_batched(config):

    rule fedkmeans_sweeps:
        """Figs 1-5: every hyper-parameter sweep in one job (fedkmeans.batch_sweeps), the
        tables one job per sweep writes."""
        output:
            fedkmeans_declare.sweep_parts(config),
        log:
            "results/logs/fedkmeans/sweeps/all.log",
        benchmark:
            "results/benchmarks/fedkmeans_sweeps/fedkmeans/sweeps/all.tsv"
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=1000,
        params:
            specs=fedkmeans_declare.sweep_specs(config),
            settings=fedkmeans_declare.shared_settings(config),
            seed=config["seed"],
        script:
            str(SCRIPTS / "fedkmeans_sweep.py")

else:

    rule fedkmeans_sweep:
        """Figs 1-5: one hyper-parameter sweep, every value and seed, train and test clients."""
        output:
            fedkmeans_declare.sweep_part("{sweep}"),
        log:
            "results/logs/fedkmeans/sweeps/{sweep}.log",
        benchmark:
            "results/benchmarks/fedkmeans_sweep/fedkmeans/sweeps/{sweep}.tsv"
        wildcard_constraints:
            sweep="|".join(config["fedkmeans"]["sweeps"]) or "none",
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=1000,
        params:
            spec=fedkmeans_sweep_spec,
            settings=fedkmeans_declare.shared_settings(config),
            seed=config["seed"],
        script:
            str(SCRIPTS / "fedkmeans_sweep.py")


rule fedkmeans_progress:
    """Figs 6-7: one run's centroids round by round."""
    output:
        fedkmeans_declare.progress_part("{run}"),
    log:
        "results/logs/fedkmeans/progress/{run}.log",
    benchmark:
        "results/benchmarks/fedkmeans_progress/fedkmeans/progress/{run}.tsv"
    wildcard_constraints:
        run="|".join(config["fedkmeans"]["progress"]) or "none",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
    params:
        spec=fedkmeans_progress_spec,
        settings=fedkmeans_declare.shared_settings(config),
        seed=config["seed"],
    script:
        str(SCRIPTS / "fedkmeans_progress.py")


rule fedkmeans_real:
    """Beyond the paper: natural clients of one real data set, beside k-FED and LocalKMeans."""
    input:
        unpack(fedkmeans_real_inputs),
        features="data/{dataset}/features.h5",
    output:
        fedkmeans_declare.real_part("{dataset}"),
    log:
        "results/logs/fedkmeans/real/{dataset}.log",
    benchmark:
        "results/benchmarks/fedkmeans_real/fedkmeans/real/{dataset}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
    params:
        settings=fedkmeans_declare.shared_settings(config, real=True),
        seed=config["seed"],
    script:
        str(SCRIPTS / "fedkmeans_real.py")

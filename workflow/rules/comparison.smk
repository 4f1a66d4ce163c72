# The cross-paper comparison (not in any paper): the rules that compute its tables. Its
# figures, gathered tables and claims are declared in fedclust.pipeline.comparison.


rule comparison_setting:
    """Every algorithm on one partition of one data set, every dropout fraction and run."""
    input:
        lambda w: comparison_pipeline.features(w.dataset),
    output:
        comparison_pipeline.setting_part("{dataset}", "{partition}"),
    wildcard_constraints:
        dataset=comparison_pipeline.DATASET_PATTERN,
        partition="iid|structured|natural",
    params:
        settings=lambda w: comparison_pipeline.job_settings(config, w.dataset),
        seed=config["seed"],
    log:
        "results/logs/comparison/settings/{dataset}_{partition}.log",
    benchmark:
        "results/benchmarks/comparison_setting/comparison/{dataset}_{partition}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
    conda:
        ENV
    script:
        "../scripts/comparison_setting.py"


rule comparison_heterogeneity:
    """Every algorithm from the natural partition of one data set towards IID."""
    input:
        lambda w: comparison_pipeline.features(w.dataset),
    output:
        comparison_pipeline.heterogeneity_part("{dataset}"),
    wildcard_constraints:
        dataset=comparison_pipeline.DATASET_PATTERN,
    params:
        settings=lambda w: comparison_pipeline.job_settings(config, w.dataset,
                                                            heterogeneity=True),
        seed=config["seed"],
    log:
        "results/logs/comparison/heterogeneity/{dataset}.log",
    benchmark:
        "results/benchmarks/comparison_heterogeneity/comparison/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
    conda:
        ENV
    script:
        "../scripts/comparison_heterogeneity.py"

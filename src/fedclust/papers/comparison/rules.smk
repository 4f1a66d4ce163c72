# The cross-paper comparison (not in any paper): the rules that compute its tables. Its
# figures, gathered tables and claims are declared in fedclust.papers.comparison.declare.


rule comparison_setting:
    """Every algorithm on one partition of one data set, every dropout fraction and run."""
    input:
        comparison_features,
    output:
        comparison_declare.setting_part("{dataset}", "{partition}"),
    log:
        "results/logs/comparison/settings/{dataset}_{partition}.log",
    benchmark:
        "results/benchmarks/comparison_setting/comparison/{dataset}_{partition}.tsv"
    wildcard_constraints:
        dataset=comparison_declare.DATASET_PATTERN,
        partition=comparison_declare.PARTITION_PATTERN,
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
    params:
        settings=comparison_settings,
        seed=config["seed"],
    script:
        str(SCRIPTS / "comparison_setting.py")


rule comparison_heterogeneity:
    """Every algorithm from the natural partition of one data set towards IID."""
    input:
        comparison_features,
    output:
        comparison_declare.heterogeneity_part("{dataset}"),
    log:
        "results/logs/comparison/heterogeneity/{dataset}.log",
    benchmark:
        "results/benchmarks/comparison_heterogeneity/comparison/{dataset}.tsv"
    wildcard_constraints:
        dataset=comparison_declare.DATASET_PATTERN,
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
    params:
        settings=comparison_heterogeneity_settings,
        seed=config["seed"],
    script:
        str(SCRIPTS / "comparison_heterogeneity.py")

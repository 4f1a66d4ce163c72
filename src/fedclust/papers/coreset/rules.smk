# Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013): the rules that compute its
# tables. Its figures, gathered tables and claims are declared in fedclust.papers.coreset.declare.


wildcard_constraints:
    objective="kmeans|kmedian",
    cdata="|".join([*datasets.DATASETS, *datasets.SYNTHETIC]),
    partition="uniform|similarity|weighted|degree",
    sites=r"\d+",
    side=r"\d+",


rule coreset_baseline:
    """Lloyd on the global data, one run: the denominator of that run's cost ratios."""
    input:
        coreset_declare.features_input,
    output:
        "results/coreset/{objective}/{cdata}/baseline/run{run}.csv",
    log:
        "results/logs/coreset/{objective}/{cdata}/baseline/run{run}.log",
    benchmark:
        "results/benchmarks/coreset_baseline/coreset/{objective}/{cdata}/baseline/run{run}.tsv"
    wildcard_constraints:
        run=r"\d+",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1500,
    params:
        settings=coreset_settings,
        seed=config["seed"],
    script:
        str(SCRIPTS / "coreset_baseline.py")


rule coreset_setting:
    """Figs 2-3 (or the k-median panel), one partition on every graph of the panel: runs
    first..last (coreset.runs_per_job of them), every size (a run's draws and solutions are
    shared by the graphs where the partition does not depend on the graph)."""
    input:
        features=coreset_declare.features_input,
        baseline=coreset_baseline_parts,
    output:
        "results/coreset/{objective}/{cdata}/n{sites}/{partition}/runs{first}-{last}.csv",
    log:
        "results/logs/coreset/{objective}/{cdata}/n{sites}/{partition}/runs{first}-{last}.log",
    benchmark:
        "results/benchmarks/coreset_setting/coreset/{objective}/{cdata}/n{sites}/{partition}/runs{first}-{last}.tsv"
    wildcard_constraints:
        first=r"\d+",
        last=r"\d+",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
    params:
        settings=coreset_settings,
        graphs=coreset_graphs,
        seed=config["seed"],
    script:
        str(SCRIPTS / "coreset_setting.py")


rule coreset_diameter:
    """Beyond the paper: one square grid of the diameter sweep, every run."""
    input:
        features=coreset_declare.features_input,
        baseline=diameter_baseline_parts,
    output:
        "results/coreset/diameter/{cdata}/side{side}.csv",
    log:
        "results/logs/coreset/diameter/{cdata}/side{side}.log",
    benchmark:
        "results/benchmarks/coreset_diameter/coreset/diameter/{cdata}/side{side}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
    params:
        settings=diameter_settings,
        seed=config["seed"],
    script:
        str(SCRIPTS / "coreset_diameter.py")

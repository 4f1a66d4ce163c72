# Rules shared by every paper, driven by fedclust.pipeline.registry: gathering per-setting
# tables, drawing figures, checking claims, and the reproduction report.


rule gather:
    """One tidy table per experiment: every setting, data set and run."""
    input:
        table_parts,
    output:
        "results/{paper}/{table}.csv",
    log:
        "results/logs/{paper}/{table}_gather.log",
    benchmark:
        "results/benchmarks/gather/{paper}/{table}_gather.tsv"
    wildcard_constraints:
        table="|".join(sorted({t for ts in registry.gathered_tables().values() for t in ts})),
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    script:
        "../scripts/gather.py"


rule figure:
    """Every figure, each drawn by one plotting function from its results table(s)."""
    input:
        figure_inputs,
    output:
        png=report(
            "figures/{paper}_{figure}.png",
            caption="../report/caption.rst",
            category="{paper}",
        ),
        pdf="figures/{paper}_{figure}.pdf",
    log:
        "results/logs/{paper}/figure_{figure}.log",
    benchmark:
        "results/benchmarks/figure/{paper}/figure_{figure}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        plot=figure_plot,
        options=figure_options,
        caption=figure_caption,
    script:
        "../scripts/figure.py"


rule unknown_figure:
    """Never runs: a figure name no other rule makes (a typo) stops here, naming the nearest
    figures."""
    input:
        unknown_figure,
    output:
        "figures/{name}.{ext}",
    log:
        "results/logs/unknown_figure/{name}.{ext}.log",
    wildcard_constraints:
        ext="png|pdf",
    localrule: True
    conda:
        ENV
    script:
        "../scripts/figure.py"


ruleorder: figure > unknown_figure


rule claims:
    """A paper's reproduced numbers against its printed ones."""
    input:
        unpack(claims_inputs),
        targets=config["paper_targets"],
    output:
        "results/{paper}/claims.csv",
    log:
        "results/logs/{paper}/claims.log",
    benchmark:
        "results/benchmarks/claims/{paper}/claims.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        declared=registry.declared_limits(config),
    script:
        "../scripts/claims.py"


rule reproduction:
    """Every paper's claims in one table (CSV) and one readable page (Markdown)."""
    input:
        [f"results/{key}/claims.csv" for key, p in registry.papers().items() if p.enabled(config)],
    output:
        csv="results/reproduction.csv",
        md=report(
            "results/reproduction.md",
            caption="../report/reproduction.rst",
            category="Reproduction",
        ),
    log:
        "results/logs/reproduction.log",
    benchmark:
        "results/benchmarks/reproduction/reproduction.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        profile=config["profile"],
        declared=registry.declared_limits(config),
    script:
        "../scripts/reproduction.py"


rule run_config:
    """The resolved configuration and the package versions of this run."""
    output:
        report(
            "results/run_config.yaml",
            caption="../report/run_config.rst",
            category="Reproduction",
        ),
    log:
        "results/logs/run_config.log",
    benchmark:
        "results/benchmarks/run_config/run_config.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        config=config,
    script:
        "../scripts/run_config.py"


rule data_checksums:
    """Path, size and sha256 of every data file the run read (after every other job)."""
    input:
        registry.targets(config),
        datasets.outside_inputs(config),
    output:
        report(
            datasets.DATA_CHECKSUMS,
            caption="../report/data_checksums.rst",
            category="Reproduction",
        ),
    log:
        "results/logs/data_checksums.log",
    benchmark:
        "results/benchmarks/data_checksums/data_checksums.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    script:
        "../scripts/data_checksums.py"


rule benchmark_summary:
    """Wall time and peak memory of every rule's jobs (their benchmark: files), per rule."""
    input:
        registry.targets(config),
    output:
        csv=benchmarks.SUMMARY_CSV,
        md=report(
            benchmarks.SUMMARY_MD,
            caption="../report/benchmarks.rst",
            category="Reproduction",
        ),
    log:
        "results/logs/benchmark_summary.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        profile=config["profile"],
    script:
        "../scripts/benchmark_summary.py"

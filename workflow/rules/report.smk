# Reproduction report: every paper's claims in one table (CSV) and one readable page (Markdown).


rule reproduction:
    input:
        claims_tables(),
    output:
        csv="results/reproduction.csv",
        md=report(
            "results/reproduction.md",
            caption="../report/reproduction.rst",
            category="Reproduction",
        ),
    params:
        profile=config.get("profile", "paper"),
    log:
        "results/logs/reproduction.log",
    conda:
        ENV
    script:
        "../scripts/reproduction.py"

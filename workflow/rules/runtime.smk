# The federated algorithms as Flower apps on real processes (fedclust.runtime.flower, issue 29).
# Needs the optional extra (pip install --require-hashes -r requirements-flower.lock); not in
# `all`: ask for its outputs by name.


rule runtime_flower:
    """The algorithms of runtime.flower.algorithms (default: k-FED, federated k-means,
    LocalKMeans and distributed Lloyd) on a SuperLink and N SuperNodes on this machine, with and
    without a SuperNode killed mid-fit: centres and cost against the in-process fit, ledger,
    Flower payload and wire bytes, wall time per round, devices lost."""
    output:
        "results/runtime/flower.csv",
    log:
        "results/logs/runtime/flower.log",
    benchmark:
        "results/benchmarks/runtime_flower/runtime/flower.tsv"
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=4000,
    params:
        settings=config["runtime"]["flower"],
        seed=config["seed"],
    script:
        "../scripts/runtime_flower.py"


rule runtime_flower_figure:
    """Bytes per algorithm as the ledger, Flower's payload and the wire count them; the cost
    on Flower over the in-process fit's."""
    input:
        "results/runtime/flower.csv",
    output:
        png="figures/runtime_flower_bytes.png",
        pdf="figures/runtime_flower_bytes.pdf",
    log:
        "results/logs/runtime/flower_figure.log",
    benchmark:
        "results/benchmarks/runtime_flower_figure/runtime/flower_figure.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
    params:
        plot="fedclust.plots.runtime:plot_flower_bytes",
        options={},
    script:
        "../scripts/figure.py"

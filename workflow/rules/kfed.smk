# k-FED (Dennis, Li & Smith, ICML 2021): Table 1, Figure 1 and Figure 5.


wildcard_constraints:
    mixture_experiment="table1|fig1",
    d=r"\d+",
    k=r"\d+",


rule kfed_mixture_setting:
    """All runs of one (d, k) setting of Table 1 or Figure 1."""
    output:
        "results/kfed/{mixture_experiment}/d{d}_k{k}.csv",
    params:
        settings=lambda w: config["kfed"][w.mixture_experiment],
        seed=config["seed"],
    log:
        "results/logs/kfed/{mixture_experiment}/d{d}_k{k}.log",
    threads: 1
    conda:
        ENV
    script:
        "../scripts/kfed_mixture_setting.py"


rule kfed_gather_mixture:
    """One tidy table per experiment, every setting and run."""
    input:
        lambda w: mixture_outputs(w.mixture_experiment),
    output:
        "results/kfed/{mixture_experiment}.csv",
    log:
        "results/logs/kfed/{mixture_experiment}_gather.log",
    conda:
        ENV
    script:
        "../scripts/concat_tables.py"


rule kfed_table1:
    """Table 1 rendered as Markdown, paper values beside."""
    input:
        runs="results/kfed/table1.csv",
        targets=config["paper_targets"],
    output:
        report(
            "results/kfed/table1.md",
            caption="../report/kfed_table1.rst",
            category="k-FED",
            subcategory="Table 1",
        ),
    log:
        "results/logs/kfed/table1_render.log",
    conda:
        ENV
    script:
        "../scripts/kfed_table1.py"


rule kfed_fig1:
    """Figure 1: accuracy against the separation c."""
    input:
        "results/kfed/fig1.csv",
    output:
        png=report(
            "figures/kfed_fig1_accuracy_vs_separation.png",
            caption="../report/kfed_fig1.rst",
            category="k-FED",
            subcategory="Figure 1",
        ),
        pdf="figures/kfed_fig1_accuracy_vs_separation.pdf",
    log:
        "results/logs/kfed/fig1_plot.log",
    conda:
        ENV
    script:
        "../scripts/kfed_fig1.py"


rule kfed_mnist_separation_k:
    """Oracle clustering of MNIST with k clusters and the c_rs of every pair of clusters."""
    input:
        expand("data/mnist/raw/{name}", name=MNIST_FILES),
    output:
        "results/kfed/fig5/pairs_k{k}.csv",
    params:
        settings=config["kfed"]["mnist_separation"],
        seed=config["seed"],
    log:
        "results/logs/kfed/fig5/pairs_k{k}.log",
    threads: 2
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/kfed_mnist_separation.py"


rule kfed_mnist_separation:
    """All pairs, the per-k summary and the chosen k (the table later experiments read)."""
    input:
        expand(
            "results/kfed/fig5/pairs_k{k}.csv",
            k=config["kfed"]["mnist_separation"]["k_grid"],
        ),
    output:
        pairs="results/kfed/fig5_pairs.csv",
        summary="results/kfed/mnist_separation_summary.csv",
        chosen=report(
            "results/kfed/mnist_chosen_k.csv",
            caption="../report/kfed_chosen_k.rst",
            category="k-FED",
            subcategory="Figure 5",
        ),
    params:
        threshold=config["kfed"]["mnist_separation"]["threshold"],
    log:
        "results/logs/kfed/fig5_summary.log",
    conda:
        ENV
    script:
        "../scripts/kfed_separation_summary.py"


rule kfed_fig5:
    """Figure 5: distribution of c_rs on MNIST for each k."""
    input:
        pairs="results/kfed/fig5_pairs.csv",
        summary="results/kfed/mnist_separation_summary.csv",
    output:
        png=report(
            "figures/kfed_fig5_mnist_separation.png",
            caption="../report/kfed_fig5.rst",
            category="k-FED",
            subcategory="Figure 5",
        ),
        pdf="figures/kfed_fig5_mnist_separation.pdf",
    params:
        threshold=config["kfed"]["mnist_separation"]["threshold"],
    log:
        "results/logs/kfed/fig5_plot.log",
    conda:
        ENV
    script:
        "../scripts/kfed_fig5.py"


rule kfed_claims:
    """k-FED's reproduced numbers against the paper's."""
    input:
        table1="results/kfed/table1.csv",
        separation="results/kfed/mnist_separation_summary.csv",
        targets=config["paper_targets"],
    output:
        "results/kfed/claims.csv",
    log:
        "results/logs/kfed/claims.log",
    conda:
        ENV
    script:
        "../scripts/kfed_claims.py"

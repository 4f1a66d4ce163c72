# LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025): Figures 1-4.


wildcard_constraints:
    snr=r"[0-9.]+",
    init="kmeanspp|perturbed",
    sweep="snr|n_clusters|n_machines",
    lkm_table="fig1|fig4|real",
    lkm_figure="fig1_misclustering|fig2_misclustering_real|fig3_objective_real|fig4_sweeps",


rule lkm_fig1_panel:
    """Figure 1, one panel: every L at one SNR and one initialization, all trials."""
    output:
        "results/localkmeans/fig1/snr{snr}_{init}.csv",
    params:
        synthetic=config["localkmeans"]["synthetic"],
        settings=config["localkmeans"]["fig1"],
        seed=config["seed"],
    log:
        "results/logs/localkmeans/fig1/snr{snr}_{init}.log",
    threads: 1
    conda:
        ENV
    script:
        "../scripts/lkm_synthetic.py"


rule lkm_fig4_sweep:
    """Figure 4, one sweep (SNR, K or M): misclustering after T iterations."""
    output:
        "results/localkmeans/fig4/{sweep}.csv",
    params:
        synthetic=config["localkmeans"]["synthetic"],
        settings=config["localkmeans"]["fig4"],
        seed=config["seed"],
    log:
        "results/logs/localkmeans/fig4/{sweep}.log",
    threads: 1
    conda:
        ENV
    script:
        "../scripts/lkm_synthetic.py"


rule lkm_real:
    """Figures 2 and 3 on one real data set: every L, all trials, every iteration."""
    input:
        "data/{dataset}/features.h5",
    output:
        "results/localkmeans/real/{dataset}.csv",
    params:
        settings=config["localkmeans"]["real"],
        seed=config["seed"],
    log:
        "results/logs/localkmeans/real/{dataset}.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/lkm_real.py"


rule lkm_gather:
    input:
        lkm_parts,
    output:
        "results/localkmeans/{lkm_table}.csv",
    log:
        "results/logs/localkmeans/{lkm_table}_gather.log",
    conda:
        ENV
    script:
        "../scripts/concat_tables.py"


rule lkm_figure:
    input:
        lambda w: "results/localkmeans/{}.csv".format(LKM_FIGURES[w.lkm_figure]),
    output:
        png=report(
            "figures/localkmeans_{lkm_figure}.png",
            caption="../report/localkmeans_figure.rst",
            category="LocalKMeans",
        ),
        pdf="figures/localkmeans_{lkm_figure}.pdf",
    log:
        "results/logs/localkmeans/figure_{lkm_figure}.log",
    conda:
        ENV
    script:
        "../scripts/lkm_figure.py"


rule lkm_claims:
    input:
        real="results/localkmeans/real.csv",
        targets=config["paper_targets"],
    output:
        "results/localkmeans/claims.csv",
    log:
        "results/logs/localkmeans/claims.log",
    conda:
        ENV
    script:
        "../scripts/lkm_claims.py"

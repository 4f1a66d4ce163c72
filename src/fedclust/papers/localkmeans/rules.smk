# LocalKMeans (Vardhan, Zhu, Ghosh & Mazumdar, 2025): the rules that compute its tables. Its
# figures, gathered tables and claims are declared in fedclust.papers.localkmeans.declare.


wildcard_constraints:
    snr=r"[0-9.]+",
    init="|".join(localkmeans.INIT_FILE_NAMES.values()),
    sweep="|".join(localkmeans.FIG4_SWEEPS),


rule lkm_fig1_panel:
    """Figure 1, one panel: every L at one SNR and one initialization, all trials."""
    output:
        "results/localkmeans/fig1/snr{snr}_{init}.csv",
    log:
        "results/logs/localkmeans/fig1/snr{snr}_{init}.log",
    benchmark:
        "results/benchmarks/lkm_fig1_panel/localkmeans/fig1/snr{snr}_{init}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        synthetic=config["localkmeans"]["synthetic"],
        settings=config["localkmeans"]["fig1"],
        seed=config["seed"],
    script:
        str(SCRIPTS / "lkm_fig1_panel.py")


rule lkm_fig4_sweep:
    """Figure 4, one sweep (SNR, K or M): misclustering after T iterations."""
    output:
        "results/localkmeans/fig4/{sweep}.csv",
    log:
        "results/logs/localkmeans/fig4/{sweep}.log",
    benchmark:
        "results/benchmarks/lkm_fig4_sweep/localkmeans/fig4/{sweep}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        synthetic=config["localkmeans"]["synthetic"],
        settings=config["localkmeans"]["fig4"],
        seed=config["seed"],
    script:
        str(SCRIPTS / "lkm_fig4_sweep.py")


rule lkm_real:
    """Figures 2 and 3 on one real data set: every L, all trials, every iteration."""
    input:
        "data/{dataset}/features.h5",
    output:
        "results/localkmeans/real/{dataset}.csv",
    log:
        "results/logs/localkmeans/real/{dataset}.log",
    benchmark:
        "results/benchmarks/lkm_real/localkmeans/real/{dataset}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
    params:
        settings=config["localkmeans"]["real"],
        seed=config["seed"],
    script:
        str(SCRIPTS / "lkm_real.py")

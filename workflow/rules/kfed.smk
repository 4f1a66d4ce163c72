# k-FED (Dennis, Li & Smith, ICML 2021): Table 1, Figures 1, 2, 3, 5 and the system claims the
# paper makes but does not measure (device failures, late devices, heterogeneity).


wildcard_constraints:
    mixture_experiment="table1|fig1",
    federated_experiment="|".join(FEDERATED_EXPERIMENTS),
    table="table1|fig1|fig2|fig3|participation|new_devices|heterogeneity",


# ---------------------------------------------------------------- Gaussian mixtures (Table 1, Fig 1)


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


rule kfed_gather:
    """One tidy table per experiment: every setting, data set and run."""
    input:
        gathered_parts,
    output:
        "results/kfed/{table}.csv",
    log:
        "results/logs/kfed/{table}_gather.log",
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


# ------------------------------------------------- oracle clusterings and separation (Fig 5, B.2)


rule kfed_oracle:
    """Oracle clustering of a data set: k-means on all of it (best of n_init k-means++ starts)."""
    input:
        "data/{dataset}/features.h5",
    output:
        "results/kfed/oracle/{dataset}/k{k}.h5",
    params:
        settings=config["kfed"]["separation"],
        seed=config["seed"],
    log:
        "results/logs/kfed/oracle/{dataset}_k{k}.log",
    threads: 2
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/kfed_oracle.py"


rule kfed_separation_k:
    """c_rs of every pair of oracle clusters."""
    input:
        features="data/{dataset}/features.h5",
        oracle="results/kfed/oracle/{dataset}/k{k}.h5",
    output:
        "results/kfed/separation/{dataset}/pairs_k{k}.csv",
    params:
        settings=config["kfed"]["separation"],
    log:
        "results/logs/kfed/separation/{dataset}_k{k}.log",
    threads: 2
    conda:
        ENV
    script:
        "../scripts/kfed_separation_pairs.py"


rule kfed_separation:
    """All pairs, the per-k summary and the chosen k (the table later experiments read)."""
    input:
        expand(
            "results/kfed/separation/{{dataset}}/pairs_k{k}.csv",
            k=config["kfed"]["separation"]["k_grid"],
        ),
    output:
        pairs="results/kfed/separation/{dataset}/pairs.csv",
        summary="results/kfed/separation/{dataset}/summary.csv",
        chosen=report(
            "results/kfed/separation/{dataset}/chosen_k.csv",
            caption="../report/kfed_chosen_k.rst",
            category="k-FED",
            subcategory="Figure 5 / Appendix B.2",
        ),
    params:
        threshold=config["kfed"]["separation"]["threshold"],
    log:
        "results/logs/kfed/separation/{dataset}_summary.log",
    conda:
        ENV
    script:
        "../scripts/kfed_separation_summary.py"


# ------------------------------------------- k-FED on real federated data (Figs 2, 3 and beyond)


rule kfed_federated:
    """Figure 2 or a beyond-the-paper experiment on one data set."""
    input:
        features="data/{dataset}/features.h5",
        oracles=lambda w: oracle_files(
            w.dataset, config["kfed"][w.federated_experiment]["n_clusters"]
        ),
        chosen=lambda w: (
            f"results/kfed/separation/{w.dataset}/chosen_k.csv"
            if config["kfed"][w.federated_experiment]["n_clusters"] == "chosen"
            else []
        ),
    output:
        "results/kfed/{federated_experiment}/{dataset}.csv",
    params:
        experiment=lambda w: w.federated_experiment,
        settings=lambda w: config["kfed"][w.federated_experiment],
        seed=config["seed"],
    log:
        "results/logs/kfed/{federated_experiment}/{dataset}.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/kfed_federated.py"


rule kfed_fig3_k:
    """Figure 3 for one data set and oracle k: k-FED vs naive distributed k-means."""
    input:
        features="data/{dataset}/features.h5",
        oracles="results/kfed/oracle/{dataset}/k{k}.h5",
    output:
        "results/kfed/fig3/{dataset}_k{k}.csv",
    params:
        experiment="fig3",
        settings=config["kfed"]["fig3"],
        seed=config["seed"],
    log:
        "results/logs/kfed/fig3/{dataset}_k{k}.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/kfed_federated.py"


# ------------------------------------------------------------------------------------- figures


rule kfed_figure:
    """Every k-FED figure, each drawn by one plotting function from one results table."""
    input:
        kfed_figure_inputs,
    output:
        png=report(
            "figures/kfed_{figure}.png",
            caption="../report/kfed_figure.rst",
            category="k-FED",
        ),
        pdf="figures/kfed_{figure}.pdf",
    params:
        threshold=config["kfed"]["separation"]["threshold"],
    log:
        "results/logs/kfed/figure_{figure}.log",
    conda:
        ENV
    script:
        "../scripts/kfed_figure.py"


rule kfed_claims:
    """k-FED's reproduced numbers against the paper's."""
    input:
        unpack(kfed_claim_inputs),
    output:
        "results/kfed/claims.csv",
    log:
        "results/logs/kfed/claims.log",
    conda:
        ENV
    script:
        "../scripts/kfed_claims.py"

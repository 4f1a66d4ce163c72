# k-FED (Dennis, Li & Smith, ICML 2021): the rules that compute its tables. Its figures,
# gathered tables and claims are declared in fedclust.papers.kfed.declare and drawn by the generic
# rules of report.smk.


wildcard_constraints:
    mixture_experiment="|".join(kfed_declare.MIXTURE_EXPERIMENTS),
    federated_experiment="|".join(kfed_declare.FEDERATED_EXPERIMENTS),


# ---------------------------------------------------------------- Gaussian mixtures (Table 1, Fig 1)


rule kfed_mixture_setting:
    """All runs of one (d, k) setting of Table 1 or Figure 1."""
    output:
        "results/kfed/{mixture_experiment}/d{d}_k{k}.csv",
    log:
        "results/logs/kfed/{mixture_experiment}/d{d}_k{k}.log",
    benchmark:
        "results/benchmarks/kfed_mixture_setting/kfed/{mixture_experiment}/d{d}_k{k}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
    params:
        settings=kfed_mixture_settings,
        seed=config["seed"],
    script:
        str(SCRIPTS / "kfed_mixture_setting.py")


rule kfed_table1:
    """Table 1 rendered as Markdown, paper values beside."""
    input:
        runs="results/kfed/table1.csv",
        targets=config["paper_targets"],
    output:
        report(
            "results/kfed/table1.md",
            caption=str(WORKFLOW / "report" / "caption.rst"),
            category="k-FED",
            subcategory="Table 1",
        ),
    log:
        "results/logs/kfed/table1_render.log",
    benchmark:
        "results/benchmarks/kfed_table1/kfed/table1_render.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        caption=registry.table_caption("kfed", "table1", config),
    script:
        str(SCRIPTS / "kfed_table1.py")


# ------------------------------------------------- oracle clusterings and separation (Fig 5, B.2)


rule kfed_oracle:
    """Oracle clustering of a data set (k-means on all of it, best of n_init k-means++ starts)
    and the c_rs of every pair of its clusters, in one job (the pairs read the clustering the
    job holds: one process's start and imports, not two)."""
    input:
        "data/{dataset}/features.h5",
    output:
        oracle="results/kfed/oracle/{dataset}/k{k}.h5",
        pairs="results/kfed/separation/{dataset}/pairs_k{k}.csv",
    log:
        "results/logs/kfed/oracle/{dataset}_k{k}.log",
    benchmark:
        "results/benchmarks/kfed_oracle/kfed/oracle/{dataset}_k{k}.tsv"
    conda:
        ENV
    # one thread: a second gives 1.15-1.42x (femnist k=20, mnist k=15, 2026-11-26) for twice
    # the cores, and the 36 jobs keep every core busy side by side
    threads: 1
    resources:
        mem_mb=2000,
    params:
        settings=config["kfed"]["separation"],
        seed=config["seed"],
    script:
        str(SCRIPTS / "kfed_oracle.py")


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
            caption=str(WORKFLOW / "report" / "caption.rst"),
            category="k-FED",
            subcategory="Figure 5 / Appendix B.2",
        ),
    log:
        "results/logs/kfed/separation/{dataset}_summary.log",
    benchmark:
        "results/benchmarks/kfed_separation/kfed/separation/{dataset}_summary.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        threshold=config["kfed"]["separation"]["threshold"],
        caption=registry.table_caption("kfed", "chosen_k", config),
    script:
        str(SCRIPTS / "kfed_separation_summary.py")


# ------------------------------------------- k-FED on real federated data (Figs 2, 3 and beyond)


rule kfed_federated:
    """Figure 2, Figure 3 or a beyond-the-paper experiment on one data set."""
    input:
        unpack(kfed_oracle_inputs),
        features="data/{dataset}/features.h5",
    output:
        "results/kfed/{federated_experiment}/{dataset}.csv",
    log:
        "results/logs/kfed/{federated_experiment}/{dataset}.log",
    benchmark:
        "results/benchmarks/kfed_federated/kfed/{federated_experiment}/{dataset}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1500,
    params:
        experiment=kfed_federated_experiment,
        settings=kfed_federated_settings,
        seed=config["seed"],
    script:
        str(SCRIPTS / "kfed_federated.py")


# ------------------------------------------ applications: Table 2 and Figure 4 (Sec. 4.2.2)


if kfed_declare.table2_batched(config):

    rule kfed_table2_cells:
        """One Table 2 setting (Z devices, k'), every method and run trained as one stack per
        round (on a GPU: kfed.table2.batch_cells); the settings' jobs share the GPU."""
        input:
            datasets.raw_files("mnist", config),
        output:
            kfed_declare.table2_setting_parts(config),
        log:
            "results/logs/kfed/table2/n{n_devices}_k{device_clusters}.log",
        benchmark:
            "results/benchmarks/kfed_table2_cells/kfed/table2/n{n_devices}_k{device_clusters}.tsv"
        wildcard_constraints:
            n_devices=r"\d+",
            device_clusters=r"\d+",
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=6000,
        params:
            settings=kfed_declare.table2_settings(config),
            cells=kfed_table2_cells,
            seed=config["seed"],
        script:
            str(SCRIPTS / "kfed_table2.py")

else:

    rule kfed_table2:
        """One Table 2 cell (Z devices, k', method) on rotated MNIST, all its runs."""
        input:
            datasets.raw_files("mnist", config),
        output:
            kfed_declare.TABLE2_PART,
        log:
            "results/logs/kfed/table2/n{n_devices}_k{device_clusters}_{method}.log",
        benchmark:
            "results/benchmarks/kfed_table2/kfed/table2/n{n_devices}_k{device_clusters}_{method}.tsv"
        wildcard_constraints:
            n_devices=r"\d+",
            device_clusters=r"\d+",
            method="global|ifca|kfed",
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=4000,
        params:
            settings=kfed_declare.table2_settings(config),
            seed=config["seed"],
        script:
            str(SCRIPTS / "kfed_table2.py")


if kfed_declare.fig4_batched(config):

    rule kfed_fig4_strategies:
        """Figure 4 on one data set, every selection strategy and run in one job
        (kfed.fig4.batch_strategies): the tables one job per strategy writes."""
        input:
            kfed_fig4_input,
        output:
            history=kfed_declare.fig4_dataset_parts(config, "fig4"),
            devices=kfed_declare.fig4_dataset_parts(config, "fig4_devices"),
        log:
            "results/logs/kfed/fig4/{dataset}.log",
        benchmark:
            "results/benchmarks/kfed_fig4_strategies/kfed/fig4/{dataset}.tsv"
        wildcard_constraints:
            dataset="femnist|shakespeare",
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=3000,
        params:
            strategies=config["kfed"]["fig4"]["strategies"],
            settings=kfed_fig4_settings,
            dataset_settings=dataset_settings,
            seed=config["seed"],
        script:
            str(SCRIPTS / "kfed_fig4.py")

else:

    rule kfed_fig4:
        """One Figure 4 curve (data set, selection strategy), all its runs."""
        input:
            kfed_fig4_input,
        output:
            history=kfed_declare.FIG4_PART["fig4"],
            devices=kfed_declare.FIG4_PART["fig4_devices"],
        log:
            "results/logs/kfed/fig4/{dataset}_{strategy}.log",
        benchmark:
            "results/benchmarks/kfed_fig4/kfed/fig4/{dataset}_{strategy}.tsv"
        wildcard_constraints:
            dataset="femnist|shakespeare",
            strategy="random|powd|kfed_powd",
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=3000,
        params:
            settings=kfed_fig4_settings,
            dataset_settings=dataset_settings,
            seed=config["seed"],
        script:
            str(SCRIPTS / "kfed_fig4.py")

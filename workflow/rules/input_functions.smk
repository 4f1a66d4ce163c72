# The input functions of every rule: one per input or parameter that depends on the
# wildcards. Each only binds the config to a library function of the wildcards (the library,
# fedclust.pipeline, decides what a job reads and sees), so the rules hold no lambdas.


def raw_files(wildcards):
    return datasets.raw_files(wildcards.dataset, config)


def dataset_settings(wildcards):
    # a data set without settings needs no section in the schema
    return config["datasets"].get(wildcards.dataset, {})


def table_parts(wildcards):
    return registry.table_parts(wildcards.paper, wildcards.table, config)


def figure_inputs(wildcards):
    return registry.figure_inputs(wildcards.paper, wildcards.figure, config)


def figure_plot(wildcards):
    return registry.plot_function(wildcards.paper, wildcards.figure, config)


def figure_options(wildcards):
    return registry.figure(wildcards.paper, wildcards.figure, config)[0].options


def unknown_figure(wildcards):
    registry.check_figure_name(f"figures/{wildcards.name}.{wildcards.ext}", config)
    return []


def figure_caption(wildcards):
    return registry.figure_caption(wildcards.paper, wildcards.figure, config)


def claims_inputs(wildcards):
    return registry.claims_inputs(wildcards.paper, config)


def kfed_mixture_settings(wildcards):
    return config["kfed"][wildcards.mixture_experiment]


def kfed_oracle_inputs(wildcards):
    return kfed_declare.oracle_inputs(wildcards.federated_experiment, wildcards.dataset, config)


def kfed_federated_experiment(wildcards):
    return wildcards.federated_experiment


def kfed_federated_settings(wildcards):
    return config["kfed"][wildcards.federated_experiment]


def kfed_table2_cells(wildcards):
    return kfed_declare.table2_cells(
        config, int(wildcards.n_devices), int(wildcards.device_clusters)
    )


def kfed_fig4_input(wildcards):
    return kfed_declare.fig4_input(wildcards.dataset, config)


def kfed_fig4_settings(wildcards):
    return kfed_declare.fig4_settings(config, wildcards.dataset)


def coreset_settings(wildcards):
    return coreset_declare.job_settings(config, wildcards.cdata, wildcards.objective)


def coreset_baseline_parts(wildcards):
    return coreset_declare.baseline_parts(
        config,
        wildcards.objective,
        wildcards.cdata,
        runs=range(int(wildcards.first), int(wildcards.last) + 1),
    )


def coreset_graphs(wildcards):
    return coreset_declare.panel_graphs(config, wildcards.objective)


def diameter_settings(wildcards):
    return coreset_declare.job_settings(config, wildcards.cdata, diameter=True)


def diameter_baseline_parts(wildcards):
    return coreset_declare.baseline_parts(config, "kmeans", wildcards.cdata, diameter=True)


def fedkmeans_sweep_spec(wildcards):
    return config["fedkmeans"]["sweeps"][wildcards.sweep]


def fedkmeans_progress_spec(wildcards):
    return config["fedkmeans"]["progress"][wildcards.run]


def fedkmeans_real_inputs(wildcards):
    return fedkmeans_declare.real_inputs(wildcards.dataset, config)


def comparison_features(wildcards):
    return comparison_declare.features(wildcards.dataset)


def comparison_settings(wildcards):
    return comparison_declare.job_settings(config, wildcards.dataset)


def comparison_heterogeneity_settings(wildcards):
    return comparison_declare.job_settings(config, wildcards.dataset, heterogeneity=True)

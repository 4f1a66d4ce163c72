# Helpers shared by all .smk files (conda environment, target lists, config lookups).

import math

ENV = "../../environment.yml"


def device_clusters_for(n_clusters, rule):
    """k' from a config value: an int, or 'sqrt' for round(sqrt(k))."""
    return max(1, int(round(math.sqrt(n_clusters)))) if rule == "sqrt" else int(rule)


def mixture_outputs(experiment):
    """Per-setting result tables of a Gaussian-mixture experiment (table1 or fig1)."""
    settings = config["kfed"][experiment]["settings"]
    return [
        f"results/kfed/{experiment}/d{s['n_features']}_k{s['n_clusters']}.csv"
        for s in settings
    ]


def claims_tables():
    """The claims table of every enabled paper, gathered into results/reproduction.*."""
    tables = []
    if config["kfed"].get("enabled", True):
        tables.append("results/kfed/claims.csv")
    return tables


def all_targets():
    targets = ["results/reproduction.md", "results/reproduction.csv"]
    if config["kfed"].get("enabled", True):
        targets += [
            "results/kfed/table1.md",
            "figures/kfed_fig1_accuracy_vs_separation.png",
            "figures/kfed_fig5_mnist_separation.png",
            "results/kfed/mnist_chosen_k.csv",
        ]
    return targets

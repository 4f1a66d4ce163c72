# Helpers shared by all .smk files (conda environment, input functions, target lists).

import glob
import math
import os

ENV = "../../environment.yml"
DATASETS = ("mnist", "femnist", "shakespeare", "postures", "mnist_cnn", "cifar10_cnn")


wildcard_constraints:
    dataset="|".join(DATASETS),
    d=r"\d+",
    k=r"\d+",


def device_clusters_for(n_clusters, rule):
    """k' from a config value: an int, or 'sqrt' for round(sqrt(k))."""
    return max(1, int(round(math.sqrt(n_clusters)))) if rule == "sqrt" else int(rule)


def leaf_femnist_dirs():
    """LEAF FEMNIST directories: datasets.femnist.leaf_dirs, else those of data_mirror."""
    dirs = config["datasets"]["femnist"].get("leaf_dirs")
    if dirs:
        return [os.path.abspath(d) for d in dirs]
    mirror = config.get("data_mirror")
    if not mirror:
        raise ValueError(
            "FEMNIST from LEAF json needs its directories: set datasets.femnist.leaf_dirs, or "
            "data_mirror to a folder holding femnist/leaf_sample_*, or datasets.femnist.source "
            "to 'tff' (or 'auto') to download TFF's official h5 files"
        )
    found = sorted(glob.glob(os.path.join(os.path.abspath(mirror), "femnist", "leaf_sample_*")))
    if not found:
        raise ValueError(f"data_mirror={mirror} has no femnist/leaf_sample_* directory")
    return found


def femnist_source():
    """'leaf' or 'tff'; 'auto' is LEAF json when directories are given, TFF's download else."""
    cfg = config["datasets"]["femnist"]
    source = cfg.get("source", "auto")
    if source != "auto":
        return source
    mirror = config.get("data_mirror")
    has_mirror_dirs = bool(mirror) and bool(
        glob.glob(os.path.join(os.path.abspath(mirror), "femnist", "leaf_sample_*"))
    )
    return "leaf" if cfg.get("leaf_dirs") or has_mirror_dirs else "tff"


def cifar10_source():
    """'jpeg' (the mirror's re-encoding) or 'official'; 'auto' is jpeg when the mirror has it."""
    source = config["datasets"]["cifar10_cnn"].get("source", "auto")
    if source != "auto":
        return source
    mirror = config.get("data_mirror")
    tar = os.path.join(os.path.abspath(mirror), "cifar10", "cifar10-jpeg-imagefolder.tar") \
        if mirror else None
    return "jpeg" if tar and os.path.isfile(tar) else "official"


def postures_source():
    """'subset' (the mirror's real subset) or 'uci' (UCI's archive, downloaded or mirrored);
    'auto' is the subset when the mirror has it."""
    source = config["datasets"]["postures"].get("source", "auto")
    if source != "auto":
        return source
    mirror = config.get("data_mirror")
    subset = os.path.join(os.path.abspath(mirror), "postures", POSTURES_SUBSET) \
        if mirror else None
    return "subset" if subset and os.path.isfile(subset) else "uci"


def postures_raw_file():
    if postures_source() == "subset":
        return f"data/postures/raw/{POSTURES_SUBSET}"
    return "data/postures/raw/Postures.csv"


def cifar10_raw_files():
    if cifar10_source() == "jpeg":
        return ["data/cifar10/raw/cifar10-jpeg-imagefolder.tar"]
    return expand("data/cifar10/raw/cifar-10-batches-py/{name}",
                  name=["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                        "data_batch_5", "test_batch"])


def dataset_inputs(wildcards):
    """Raw files a data set is prepared from."""
    name = wildcards.dataset
    if name == "mnist":
        return expand("data/mnist/raw/{name}", name=MNIST_FILES)
    if name == "shakespeare":
        return ["data/shakespeare/raw/raw_data.txt"]
    if name == "postures":
        csv = config["datasets"]["postures"].get("csv")
        return [os.path.abspath(csv)] if csv else [postures_raw_file()]
    if femnist_source() == "tff":
        return expand("data/femnist/tff/{name}", name=TFF_EMNIST_H5)
    files = []
    for d in leaf_femnist_dirs():
        files += sorted(glob.glob(os.path.join(d, "*", "*.json*")))
    if not files:
        raise ValueError(f"no LEAF json files under {leaf_femnist_dirs()}")
    return files


def mixture_outputs(experiment):
    """Per-setting result tables of a Gaussian-mixture experiment (table1 or fig1)."""
    settings = config["kfed"][experiment]["settings"]
    return [
        f"results/kfed/{experiment}/d{s['n_features']}_k{s['n_clusters']}.csv"
        for s in settings
    ]


def separation_datasets():
    return config["kfed"]["separation"]["datasets"]


def oracle_files(dataset, n_clusters):
    """Oracle clusterings an experiment may use: all of the separation grid for 'chosen'."""
    if n_clusters == "chosen":
        if dataset not in separation_datasets():
            raise ValueError(
                f"n_clusters: chosen needs {dataset} in kfed.separation.datasets "
                f"(it has {separation_datasets()})"
            )
        ks = config["kfed"]["separation"]["k_grid"]
    else:
        ks = [int(n_clusters)]
    return [f"results/kfed/oracle/{dataset}/k{k}.h5" for k in ks]


FEDERATED_EXPERIMENTS = ("fig2", "participation", "new_devices", "heterogeneity")


def federated_parts(experiment):
    """Per-dataset (and per-k for fig3) result tables of a federated k-FED experiment."""
    cfg = config["kfed"][experiment]
    if experiment == "fig3":
        return [
            f"results/kfed/fig3/{ds}_k{k}.csv"
            for ds in cfg["datasets"]
            for k in cfg["n_clusters"]
        ]
    return [f"results/kfed/{experiment}/{ds}.csv" for ds in cfg["datasets"]]


def gathered_parts(wildcards):
    if wildcards.table in ("table1", "fig1"):
        return mixture_outputs(wildcards.table)
    return federated_parts(wildcards.table)


def claims_tables():
    """The claims table of every enabled paper, gathered into results/reproduction.*."""
    tables = []
    if config["kfed"].get("enabled", True):
        tables.append("results/kfed/claims.csv")
    if config["localkmeans"].get("enabled", True) and config["localkmeans"]["real"]["datasets"]:
        tables.append("results/localkmeans/claims.csv")
    return tables


INIT_FILE_NAMES = {"k-means++": "kmeanspp", "perturbed": "perturbed"}
LKM_FIGURES = {
    # figure stem -> the results table it is drawn from
    "fig1_misclustering": "fig1",
    "fig2_misclustering_real": "real",
    "fig3_objective_real": "real",
    "fig4_sweeps": "fig4",
}


def lkm_parts(wildcards):
    cfg = config["localkmeans"]
    if wildcards.lkm_table == "fig1":
        return [
            f"results/localkmeans/fig1/snr{snr}_{INIT_FILE_NAMES[init]}.csv"
            for snr in cfg["fig1"]["snrs"]
            for init in cfg["fig1"]["inits"]
        ]
    if wildcards.lkm_table == "fig4":
        return [
            f"results/localkmeans/fig4/{sweep}.csv"
            for sweep in ("snr", "n_clusters", "n_machines")
            if cfg["fig4"][sweep]
        ]
    return [f"results/localkmeans/real/{ds}.csv" for ds in cfg["real"]["datasets"]]


def lkm_targets():
    cfg = config["localkmeans"]
    targets = ["figures/localkmeans_fig1_misclustering.png", "figures/localkmeans_fig4_sweeps.png"]
    if cfg["real"]["datasets"]:
        targets += [
            "figures/localkmeans_fig2_misclustering_real.png",
            "figures/localkmeans_fig3_objective_real.png",
        ]
    return targets


def kfed_targets():
    cfg = config["kfed"]
    targets = [
        "results/kfed/table1.md",
        "figures/kfed_fig1_accuracy_vs_separation.png",
    ]
    for ds in separation_datasets():
        targets += [
            f"figures/kfed_fig5_separation_{ds}.png",
            f"results/kfed/separation/{ds}/chosen_k.csv",
        ]
    figures = {
        "fig2": "kfed_fig2_structured_vs_iid",
        "fig3": "kfed_fig3_kfed_vs_distributed_lloyd",
        "participation": "kfed_participation",
        "new_devices": "kfed_new_devices",
        "heterogeneity": "kfed_heterogeneity",
    }
    for experiment, stem in figures.items():
        if cfg[experiment]["datasets"]:
            targets.append(f"figures/{stem}.png")
    return targets


def all_targets():
    targets = ["results/reproduction.md", "results/reproduction.csv"]
    if config["kfed"].get("enabled", True):
        targets += kfed_targets()
    if config["localkmeans"].get("enabled", True):
        targets += lkm_targets()
    return targets


KFED_FIGURES = {
    # figure stem -> the results table(s) it is drawn from
    "fig1_accuracy_vs_separation": ["results/kfed/fig1.csv"],
    "fig2_structured_vs_iid": ["results/kfed/fig2.csv"],
    "fig3_kfed_vs_distributed_lloyd": ["results/kfed/fig3.csv"],
    "participation": ["results/kfed/participation.csv"],
    "new_devices": ["results/kfed/new_devices.csv"],
    "heterogeneity": ["results/kfed/heterogeneity.csv"],
}


def kfed_figure_inputs(wildcards):
    if wildcards.figure.startswith("fig5_separation_"):
        ds = wildcards.figure.removeprefix("fig5_separation_")
        return [
            f"results/kfed/separation/{ds}/pairs.csv",
            f"results/kfed/separation/{ds}/summary.csv",
        ]
    if wildcards.figure not in KFED_FIGURES:
        raise ValueError(f"unknown k-FED figure {wildcards.figure!r}")
    return KFED_FIGURES[wildcards.figure]


def kfed_claim_inputs(wildcards):
    cfg = config["kfed"]
    inputs = {
        "targets": config["paper_targets"],
        "table1": "results/kfed/table1.csv",
        "separation": [
            f"results/kfed/separation/{ds}/summary.csv" for ds in separation_datasets()
        ],
    }
    if cfg["fig2"]["datasets"]:
        inputs["fig2"] = "results/kfed/fig2.csv"
    if cfg["fig3"]["datasets"]:
        inputs["fig3"] = "results/kfed/fig3.csv"
    return inputs

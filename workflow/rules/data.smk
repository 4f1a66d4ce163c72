# Data: fetch every public file from its official URL, or from `data_mirror` when set (the
# checksums are verified either way), then prepare each data set's feature matrix once
# (data/<name>/features.h5) for every experiment to read.

MNIST_FILES = [
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
]
TFF_EMNIST_H5 = ["fed_emnist_train.h5", "fed_emnist_test.h5"]


rule fetch_mnist:
    output:
        expand("data/mnist/raw/{name}", name=MNIST_FILES),
    params:
        mirror=config.get("data_mirror"),
    log:
        "results/logs/data/fetch_mnist.log",
    conda:
        ENV
    script:
        "../scripts/fetch_data.py"


rule fetch_shakespeare:
    output:
        "data/shakespeare/raw/raw_data.txt",
    params:
        mirror=config.get("data_mirror"),
    log:
        "results/logs/data/fetch_shakespeare.log",
    conda:
        ENV
    script:
        "../scripts/fetch_data.py"


rule fetch_tff_emnist:
    output:
        expand("data/femnist/tff/{name}", name=TFF_EMNIST_H5),
    params:
        mirror=config.get("data_mirror"),
    log:
        "results/logs/data/fetch_tff_emnist.log",
    conda:
        ENV
    script:
        "../scripts/fetch_data.py"


rule prepare_dataset:
    """Features, class labels and natural devices of one data set, cached as HDF5."""
    input:
        dataset_inputs,
    output:
        "data/{dataset}/features.h5",
    params:
        settings=lambda w: config["datasets"][w.dataset],
        seed=config["seed"],
    log:
        "results/logs/data/prepare_{dataset}.log",
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/prepare_dataset.py"

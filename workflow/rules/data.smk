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
POSTURES_SUBSET = "Postures.subset_classes1-3_users0-2.csv"


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


rule fetch_postures:
    """UCI's Postures.csv (archive verified by content: UCI publishes no checksum) or the
    mirror's verified subset (see datasets.postures.source)."""
    output:
        postures_raw_file(),
    params:
        mirror=config.get("data_mirror"),
        source=postures_source(),
    log:
        "results/logs/data/fetch_postures.log",
    conda:
        ENV
    script:
        "../scripts/fetch_data.py"


rule fetch_cifar10:
    """CIFAR-10: the official python batches, or the mirror's JPEG re-encoding (see source)."""
    output:
        cifar10_raw_files(),
    params:
        mirror=config.get("data_mirror"),
        source=cifar10_source(),
    log:
        "results/logs/data/fetch_cifar10.log",
    conda:
        ENV
    script:
        "../scripts/fetch_data.py"


rule decode_cifar10:
    """Both CIFAR-10 splits as uint8 arrays, decoded once (about 10 s for the JPEG tar)."""
    input:
        cifar10_raw_files(),
    output:
        "data/cifar10/images.h5",
    params:
        source=cifar10_source(),
    log:
        "results/logs/data/decode_cifar10.log",
    resources:
        mem_mb=4000,
    conda:
        ENV
    script:
        "../scripts/decode_cifar10.py"


rule train_embedding:
    """Train a small CNN on CPU, record its test accuracy, embed the images (Figs 2-3)."""
    input:
        lambda w: (
            expand("data/mnist/raw/{name}", name=MNIST_FILES)
            if w.dataset == "mnist_cnn"
            else ["data/cifar10/images.h5"]
        ),
    output:
        features="data/{dataset}/features.h5",
        summary="results/embeddings/{dataset}.csv",
    wildcard_constraints:
        dataset="mnist_cnn|cifar10_cnn",
    params:
        settings=lambda w: config["datasets"][w.dataset],
        seed=config["seed"],
    log:
        "results/logs/data/train_{dataset}.log",
    threads: 2
    resources:
        mem_mb=6000,
        runtime=240,
    conda:
        ENV
    script:
        "../scripts/train_embedding.py"


rule prepare_dataset:
    """Features, class labels and natural devices of one data set, cached as HDF5."""
    input:
        dataset_inputs,
    output:
        "data/{dataset}/features.h5",
    wildcard_constraints:
        dataset="mnist|femnist|shakespeare|postures",
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

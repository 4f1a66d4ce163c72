# Data: fetch every public file from its official URL, or from `data_mirror` when set (the
# checksums are verified either way), then prepare each data set's feature matrix once
# (data/<name>/features.h5) for every experiment to read. File names and sources come from
# fedclust.pipeline.data.


rule fetch_mnist:
    """MNIST's four idx files."""
    output:
        datasets.fetch_outputs("fetch_mnist", config),
    log:
        "results/logs/data/fetch_mnist.log",
    benchmark:
        "results/benchmarks/fetch_mnist/data/fetch_mnist.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    script:
        "../scripts/fetch_data.py"


rule fetch_femnist:
    """TensorFlow Federated's EMNIST h5 files (when FEMNIST is not read from LEAF json)."""
    output:
        datasets.fetch_outputs("fetch_femnist", config),
    log:
        "results/logs/data/fetch_femnist.log",
    benchmark:
        "results/benchmarks/fetch_femnist/data/fetch_femnist.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    script:
        "../scripts/fetch_data.py"


rule fetch_shakespeare:
    """The Gutenberg text LEAF's Shakespeare preprocessing starts from."""
    output:
        datasets.fetch_outputs("fetch_shakespeare", config),
    log:
        "results/logs/data/fetch_shakespeare.log",
    benchmark:
        "results/benchmarks/fetch_shakespeare/data/fetch_shakespeare.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    script:
        "../scripts/fetch_data.py"


rule fetch_postures:
    """UCI's Postures.csv (archive verified by content: UCI publishes no checksum) or the
    mirror's verified subset (datasets.postures.source)."""
    output:
        datasets.fetch_outputs("fetch_postures", config),
    log:
        "results/logs/data/fetch_postures.log",
    benchmark:
        "results/benchmarks/fetch_postures/data/fetch_postures.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        source=datasets.source("postures", config),
    script:
        "../scripts/fetch_data.py"


rule fetch_cifar10:
    """CIFAR-10: the official python batches, or the mirror's JPEG re-encoding (source)."""
    output:
        datasets.fetch_outputs("fetch_cifar10", config),
    log:
        "results/logs/data/fetch_cifar10.log",
    benchmark:
        "results/benchmarks/fetch_cifar10/data/fetch_cifar10.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    params:
        source=datasets.source("cifar10_cnn", config),
    script:
        "../scripts/fetch_data.py"


rule fetch_year_prediction:
    """UCI's YearPredictionMSD archive (Balcan et al.'s data set; verified by content: UCI
    publishes no checksum). Not in the offline mirror: downloaded, or read from a mirror that
    holds year_prediction_msd/YearPredictionMSD.txt.zip."""
    output:
        datasets.fetch_outputs("fetch_year_prediction", config),
    log:
        "results/logs/data/fetch_year_prediction.log",
    benchmark:
        "results/benchmarks/fetch_year_prediction/data/fetch_year_prediction.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
    script:
        "../scripts/fetch_data.py"


rule decode_cifar10:
    """Both CIFAR-10 splits as uint8 arrays, decoded once (about 10 s for the JPEG tar)."""
    input:
        datasets.fetch_outputs("fetch_cifar10", config),
    output:
        "data/cifar10/images.h5",
    log:
        "results/logs/data/decode_cifar10.log",
    benchmark:
        "results/benchmarks/decode_cifar10/data/decode_cifar10.tsv"
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        source=datasets.source("cifar10_cnn", config),
    script:
        "../scripts/decode_cifar10.py"


rule train_embedding:
    """Train a small CNN on CPU, record its test accuracy, embed the images (LocalKMeans
    Figs 2-3)."""
    input:
        raw_files,
    output:
        features="data/{dataset}/features.h5",
        summary="results/embeddings/{dataset}.csv",
    log:
        "results/logs/data/train_{dataset}.log",
    benchmark:
        "results/benchmarks/train_embedding/data/train_{dataset}.tsv"
    wildcard_constraints:
        dataset="|".join(datasets.dataset_names(embedding=True)),
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=2500,
        runtime=240,
    params:
        settings=dataset_settings,
        seed=config["seed"],
    script:
        "../scripts/train_embedding.py"


rule prepare_dataset:
    """Features, class labels and natural devices of one data set, cached as HDF5."""
    input:
        raw_files,
    output:
        "data/{dataset}/features.h5",
    log:
        "results/logs/data/prepare_{dataset}.log",
    benchmark:
        "results/benchmarks/prepare_dataset/data/prepare_{dataset}.tsv"
    wildcard_constraints:
        dataset="|".join(datasets.dataset_names(embedding=False)),
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        settings=dataset_settings,
        seed=config["seed"],
    script:
        "../scripts/prepare_dataset.py"

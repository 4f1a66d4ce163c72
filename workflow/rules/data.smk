# Data: fetch every public file from its official URL, or from `data_mirror` when set (the
# checksums are verified either way), then prepare each data set's feature matrix once
# (data/<name>/features.h5) for every experiment to read. File names and sources come from
# fedclust.pipeline.data.


# One fetch rule per upstream release of the registry (fedclust.pipeline.data.RELEASES: what
# each is, its files, checks and fetch), named fetch_<release>. A local rule: downloads need
# the network that a cluster's compute nodes often lack.
for release in datasets.RELEASES.values():

    rule:
        name:
            release.rule
        output:
            release.outputs(config),
        log:
            f"results/logs/data/{release.rule}.log",
        benchmark:
            f"results/benchmarks/{release.rule}/data/{release.rule}.tsv"
        # the data first: CIFAR-10's chain (fetch, decode, train the CNN) is the run's longest
        # (4 min of the quick profile, 40 of the paper's); started last, a core waits on it
        priority: 1
        localrule: True
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=500,
        params:
            source=release.source(config),
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
    priority: 1  # as the fetch rules
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        source=datasets.source("cifar10_cnn", config),
    script:
        "../scripts/decode_cifar10.py"


rule train_embedding:
    """Train a small CNN (on torch_device), record its test accuracy, embed the images
    (LocalKMeans Figs 2-3)."""
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
    priority: 1  # as the fetch rules
    conda:
        ENV
    # one thread: a second gave 1.3x (the CIFAR-10 CNN at paper scale, 0b2e18e) for twice the
    # cores; even alone on one core (about 24 min) it is shorter than the longest coreset job
    threads: 1
    resources:
        mem_mb=2500,
        runtime=240,
    params:
        settings=dataset_settings,
        seed=config["seed"],
        device=config["torch_device"],
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

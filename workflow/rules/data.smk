# Data: fetch every public file from its official URL, or from `data_mirror` when set; the
# checksums are verified either way.

MNIST_FILES = [
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
]


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
        "../scripts/fetch_mnist.py"

"""Train a small CNN on CPU and write its embeddings as a prepared data set (Figs 2-3)."""

from pathlib import Path

import _bootstrap  # noqa: F401  (puts src/ on sys.path)
import numpy as np
import pandas as pd
import torch

from fedclust.data.cifar10 import load_cifar10_cache
from fedclust.data.mnist import load_mnist
from fedclust.embed import train_and_embed
from fedclust.experiments.datasets import PreparedData, write_prepared
from fedclust.io import log_to_file, write_table

log = log_to_file(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
name = snakemake.wildcards.dataset
cfg = snakemake.params.settings
n_embed = cfg.get("n_embed", 50000)
if name == "mnist_cnn":
    root = Path(snakemake.input[0]).parent
    X_train, y_train = load_mnist(root, split="train")
    X_test, y_test = load_mnist(root, split="test")
    model, source = "mnist", "MNIST (official idx files)"
else:
    data = load_cifar10_cache(snakemake.input[0])
    X_train, y_train, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
    model, source = "cifar10", f"CIFAR-10, {data.source}"
n_embed = min(n_embed, len(X_train))
log.info("%s: training the %s CNN (%s epochs, %s training images), embedding %d images",
         source, model, cfg.get("epochs"), cfg.get("max_train") or len(X_train), n_embed)
result = train_and_embed(model, X_train, y_train, X_test, y_test, X_train[:n_embed],
                         y_train[:n_embed], epochs=cfg.get("epochs"),
                         max_train=cfg.get("max_train"), seed=snakemake.params.seed)
log.info("test accuracy %.4f", result.test_accuracy)
features = result.embeddings
description = (f"{features.shape[1]}-d CNN features of the first {n_embed} training images of "
               f"{source}; test accuracy {result.test_accuracy:.4f}")
params = {**result.params, "test_accuracy": result.test_accuracy, "source": source,
          "history": result.history}
write_prepared(PreparedData(name=name, X=features, y=result.labels,
                            devices=np.full(len(features), -1, dtype=np.int64),
                            description=description, params=params), snakemake.output.features)
write_table(pd.DataFrame([{
    "dataset": name, "source": source, "model": model, "embedding_dim": features.shape[1],
    "n_embedded": len(features), "epochs": result.params.get("epochs"),
    "train_images": cfg.get("max_train") or len(X_train), "test_accuracy": result.test_accuracy,
    "train_seconds": float(np.sum(result.history.get("epoch_seconds", [np.nan]))),
}]), snakemake.output.summary)
log.info("wrote %s and %s", snakemake.output.features, snakemake.output.summary)

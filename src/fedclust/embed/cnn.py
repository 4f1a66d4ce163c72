"""Small CNNs whose hidden features serve as image embeddings for clustering.

Two networks trained on the CPU in minutes: ``"mnist"`` (:class:`MnistCNN`, 1,568-d
embeddings) and ``"cifar10"`` (:class:`Cifar10CNN`, 512-d); :func:`train_and_embed` trains
one and embeds a set of images, :func:`write_embeddings` and :func:`read_embeddings` store
the result. The architectures, the training recipe, the measured accuracies and what makes
a run deterministic: docs/data.md, *CNN embeddings*.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .._torch import deterministic, resolve_device
from .._validation import check_choice, check_int, check_real
from ..data.cache import read_h5, write_h5
from ..progress import progress_bar
from ._torchvision import import_torchvision

__all__ = [
    "Cifar10CNN",
    "EmbeddingResult",
    "MODEL_DEFAULTS",
    "MODEL_NAMES",
    "MnistCNN",
    "build_model",
    "read_embeddings",
    "train_and_embed",
    "write_embeddings",
]

N_CLASSES = 10
_FORMAT = "fedclust.embeddings/1"
_EVAL_BATCH = 1000
_MOMENTUM = 0.9
_WEIGHT_DECAY = 5e-4


class MnistCNN(nn.Module):
    """Two conv/pool stages and a linear classifier; embedding = the 1,568 pooled features."""

    embedding_dim = 32 * 7 * 7
    image_shape = (1, 28, 28)

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(self.embedding_dim, N_CLASSES)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings (n, 1568) of normalised images (n, 1, 28, 28)."""
        return self.features(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.embed(x))


def _conv_block(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out),
                         nn.ReLU(), nn.MaxPool2d(2))


class Cifar10CNN(nn.Module):
    """Three conv/BN/pool blocks, a 512-unit hidden layer and a linear classifier.

    The embedding is the 512-d hidden layer's activation (after its ReLU).
    """

    embedding_dim = 512
    image_shape = (3, 32, 32)

    def __init__(self, dropout: float = 0.25):
        super().__init__()
        self.features = nn.Sequential(_conv_block(3, 32), _conv_block(32, 64),
                                      _conv_block(64, 128), nn.Flatten())
        self.hidden = nn.Sequential(nn.Linear(128 * 4 * 4, self.embedding_dim), nn.ReLU())
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(self.embedding_dim, N_CLASSES)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings (n, 512) of normalised images (n, 3, 32, 32)."""
        return self.hidden(self.features(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(self.embed(x)))


_MODELS = {"mnist": MnistCNN, "cifar10": Cifar10CNN}
MODEL_NAMES = tuple(_MODELS)

# Suggested training settings per network (docs/data.md, *CNN embeddings*, for measured
# accuracies).
MODEL_DEFAULTS = {
    "mnist": {"epochs": 2, "batch_size": 128, "lr": 0.05, "augment": False},
    "cifar10": {"epochs": 15, "batch_size": 128, "lr": 0.05, "augment": True},
}

# Accepted image layouts per network: shape after the sample axis -> how to reach (C, H, W).
_LAYOUTS = {
    "mnist": {(784,): "flat", (28, 28): "hw", (1, 28, 28): "chw"},
    "cifar10": {(32, 32, 3): "hwc", (3, 32, 32): "chw"},
}


def build_model(model_name: str) -> nn.Module:
    """A freshly initialised network: ``"mnist"`` or ``"cifar10"`` (uses torch's generator)."""
    check_choice(model_name, "model_name", MODEL_NAMES)
    return _MODELS[model_name]()


@dataclass
class EmbeddingResult:
    """What :func:`train_and_embed` returns and :func:`read_embeddings` reads back.

    Attributes
    ----------
    embeddings : ndarray of shape (n, d), float32
        d = 1,568 (``"mnist"``) or 512 (``"cifar10"``).
    labels : ndarray of shape (n,), int64
        The labels of the embedded images.
    test_accuracy : float
        Accuracy of the trained network's predictions on the test images, in ``[0, 1]``.
    params : dict
        Training parameters (model, optimiser, schedule, epochs, batch size, learning rate,
        seed, sizes, normalisation, versions): everything needed to rerun.
    history : dict
        Per-epoch ``train_loss``, ``train_accuracy`` (on the augmented batches, while training)
        and ``epoch_seconds``.
    attrs : dict
        Further attributes of the file read back (e.g. the data source), empty after training.
    """

    embeddings: np.ndarray
    labels: np.ndarray
    test_accuracy: float
    params: dict
    history: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# inputs


def _images_tensor(images, name: str, model_name: str) -> torch.Tensor:
    """``images`` as an (n, C, H, W) tensor: uint8 kept as uint8, anything else float32."""
    array = np.asarray(images)
    layouts = _LAYOUTS[model_name]
    if array.ndim < 2 or array.shape[1:] not in layouts:
        shapes = " or ".join(str(("n",) + s).replace("'", "") for s in layouts)
        raise ValueError(f"{name} must have shape {shapes} for model {model_name!r}; "
                         f"got {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} holds no images")
    if array.dtype != np.uint8:
        if array.dtype.kind not in "fiu":
            raise ValueError(f"{name} must hold uint8 pixels (0..255) or numbers in [0, 1]; "
                             f"got dtype {array.dtype}")
        array = array.astype(np.float32, copy=False)
        if not np.isfinite(array).all():
            raise ValueError(f"{name} contains NaN or infinite values")
    channels, height, width = _MODELS[model_name].image_shape
    layout = layouts[array.shape[1:]]
    if layout == "hwc":
        array = array.transpose(0, 3, 1, 2)
    array = np.ascontiguousarray(array.reshape(array.shape[0], channels, height, width))
    return torch.from_numpy(array)


def _labels_tensor(labels, name: str, n: int, images_name: str) -> torch.Tensor:
    array = np.asarray(labels)
    if array.ndim != 1 or array.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array with one label per image of {images_name} "
                         f"({n}); got shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer class labels; got dtype {array.dtype}")
    if array.size and (array.min() < 0 or array.max() >= N_CLASSES):
        raise ValueError(f"{name} must hold labels in 0..{N_CLASSES - 1}; got values in "
                         f"{array.min()}..{array.max()}")
    return torch.from_numpy(array.astype(np.int64))


def _to_unit(batch: torch.Tensor) -> torch.Tensor:
    return batch.float().div_(255.0) if batch.dtype == torch.uint8 else batch.float()


def _channel_stats(images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel mean and standard deviation of ``images`` scaled to [0, 1] (float64 sums)."""
    total = torch.zeros(images.shape[1], dtype=torch.float64)
    squares = torch.zeros_like(total)
    for start in range(0, images.shape[0], _EVAL_BATCH):
        chunk = _to_unit(images[start:start + _EVAL_BATCH]).double()
        total += chunk.sum(dim=(0, 2, 3))
        squares += chunk.square().sum(dim=(0, 2, 3))
    count = images.shape[0] * images.shape[2] * images.shape[3]
    mean = total / count
    std = (squares / count - mean.square()).clamp_min(1e-12).sqrt()
    return mean.float(), std.float()


# --------------------------------------------------------------------------------------------
# training


def _augmenter():
    """Random crop (32, padding 4) + horizontal flip, drawn independently for every image."""
    v2 = import_torchvision("transforms.v2")
    transform = v2.Compose([v2.RandomCrop(32, padding=4), v2.RandomHorizontalFlip()])

    def augment(batch: torch.Tensor) -> torch.Tensor:
        return torch.stack([transform(image) for image in batch])

    return augment


def _batch_starts(n: int, batch_size: int) -> list[int]:
    """Batch start offsets; a last batch of a single image joins the previous one (batch norm)."""
    starts = list(range(0, n, batch_size))
    if len(starts) > 1 and n - starts[-1] == 1:
        starts.pop()
    return starts


def _cosine(step: int, total: int) -> float:
    return 0.5 * (1.0 + math.cos(math.pi * step / total))


def _train(model, X, y, *, normalize, augment, epochs, batch_size, lr, generator, desc,
           progress, device) -> dict:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=_MOMENTUM, nesterov=True,
                                weight_decay=_WEIGHT_DECAY)
    starts = _batch_starts(X.shape[0], batch_size)
    total = epochs * len(starts)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _cosine(s, total))
    history = {"train_loss": [], "train_accuracy": [], "epoch_seconds": []}
    for epoch in range(epochs):
        tic = time.perf_counter()
        model.train()
        order = torch.randperm(X.shape[0], generator=generator)
        ends = starts[1:] + [X.shape[0]]
        loss_sum, correct = 0.0, 0
        bar = progress_bar(total=len(starts), disable=not progress,
                           desc=f"{desc} epoch {epoch + 1}/{epochs}", unit="batch")
        for start, end in zip(starts, ends, strict=True):
            idx = order[start:end]
            batch = X[idx]
            if augment is not None:
                batch = augment(batch)          # on the CPU: the same draws on every device
            logits = model(normalize(batch.to(device, non_blocking=True)))
            loss = F.cross_entropy(logits, y[idx].to(device, non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            value = loss.item()
            loss_sum += value * (end - start)
            correct += int((logits.detach().argmax(1).cpu() == y[idx]).sum())
            bar.update()
            bar.set_postfix(loss=f"{value:.3f}")
        bar.close()
        history["train_loss"].append(loss_sum / X.shape[0])
        history["train_accuracy"].append(correct / X.shape[0])
        history["epoch_seconds"].append(time.perf_counter() - tic)
    return history


@torch.inference_mode()
def _apply(model, X, normalize, fn, device) -> torch.Tensor:
    model.eval()
    out = [fn(normalize(X[start:start + _EVAL_BATCH].to(device))).cpu() for start in
           range(0, X.shape[0], _EVAL_BATCH)]
    return torch.cat(out)


def train_and_embed(model_name: str, train_images, train_labels, test_images, test_labels,
                    embed_images=None, embed_labels=None, *, epochs: int | None = None,
                    batch_size: int | None = None, lr: float | None = None, seed: int = 0,
                    max_train: int | None = None, augment: bool | None = None,
                    progress: bool = True, device="cpu") -> EmbeddingResult:
    """Train a small CNN, measure its test accuracy and embed images with it.

    Parameters
    ----------
    model_name : {"mnist", "cifar10"}
    train_images, test_images, embed_images : array-like
        ``"mnist"``: shape (n, 784), (n, 28, 28) or (n, 1, 28, 28); ``"cifar10"``: shape
        (n, 32, 32, 3) (as :func:`fedclust.data.load_cifar10` returns them) or (n, 3, 32, 32).
        uint8 pixels (0..255) or numbers in ``[0, 1]`` (as :func:`fedclust.data.load_mnist`
        returns them).
    train_labels, test_labels, embed_labels : array-like of int
        One class label in 0..9 per image.
    embed_images, embed_labels : optional
        The images to embed and their labels; both or neither. Default: all of
        ``train_images`` (not only the first ``max_train``) with ``train_labels``.
    epochs, batch_size, lr, augment : optional
        Default to :data:`MODEL_DEFAULTS` of ``model_name``. ``augment`` (random crop with
        padding 4 and horizontal flip) needs 32 x 32 images.
    seed : int
        Seeds initialisation, batch order, dropout and augmentation.
    max_train : int, optional
        Train on the first ``max_train`` training images only.
    progress : bool
        Show a tqdm progress bar per epoch.
    device : {"cpu", "cuda", "auto"} or torch.device
        Where the network trains and embeds (:func:`fedclust._torch.resolve_device`). The
        batch order and the augmentation are drawn on the CPU either way; dropout is drawn on
        the device.

    Returns
    -------
    EmbeddingResult
    """
    check_choice(model_name, "model_name", MODEL_NAMES)
    defaults = MODEL_DEFAULTS[model_name]
    epochs = check_int(defaults["epochs"] if epochs is None else epochs, "epochs", low=1)
    batch_size = check_int(defaults["batch_size"] if batch_size is None else batch_size,
                           "batch_size", low=1)
    lr = check_real(defaults["lr"] if lr is None else lr, "lr", low=0.0, low_inclusive=False)
    seed = check_int(seed, "seed", low=0)
    augment = bool(defaults["augment"] if augment is None else augment)
    if augment and _MODELS[model_name].image_shape[1:] != (32, 32):
        raise ValueError(f"augment=True needs 32 x 32 images; model {model_name!r} takes "
                         f"{_MODELS[model_name].image_shape[1:]}")
    if (embed_images is None) != (embed_labels is None):
        raise ValueError("give embed_images and embed_labels together, or neither (to embed "
                         "the training images)")

    X_train = _images_tensor(train_images, "train_images", model_name)
    y_train = _labels_tensor(train_labels, "train_labels", X_train.shape[0], "train_images")
    X_test = _images_tensor(test_images, "test_images", model_name)
    y_test = _labels_tensor(test_labels, "test_labels", X_test.shape[0], "test_images")
    if embed_images is None:
        X_embed, y_embed = X_train, y_train
    else:
        X_embed = _images_tensor(embed_images, "embed_images", model_name)
        y_embed = _labels_tensor(embed_labels, "embed_labels", X_embed.shape[0], "embed_images")
    if max_train is not None:
        max_train = check_int(max_train, "max_train", low=1, high=X_train.shape[0])
        X_fit, y_fit = X_train[:max_train], y_train[:max_train]
    else:
        X_fit, y_fit = X_train, y_train
    if X_fit.shape[0] < 2:
        raise ValueError(f"train_images holds {X_fit.shape[0]} image; at least 2 are needed")

    device = resolve_device(device)
    mean, std = _channel_stats(X_fit)
    shape = (1, -1, 1, 1)
    mean_d, std_d = mean.view(shape).to(device), std.view(shape).to(device)

    def normalize(batch: torch.Tensor) -> torch.Tensor:
        batch = (_to_unit(batch) - mean_d) / std_d
        return batch.contiguous(memory_format=torch.channels_last)

    with deterministic(seed, device):
        # channels-last layout: about 25 % faster convolutions on CPU (measured, 2 cores).
        model = build_model(model_name).to(device, memory_format=torch.channels_last)
        generator = torch.Generator().manual_seed(seed)
        history = _train(model, X_fit, y_fit, normalize=normalize,
                         augment=_augmenter() if augment else None, epochs=epochs,
                         batch_size=batch_size, lr=lr, generator=generator, desc=model_name,
                         progress=progress, device=device)
        predictions = _apply(model, X_test, normalize, lambda b: model(b).argmax(1), device)
        embeddings = _apply(model, X_embed, normalize, model.embed, device)

    params = {
        "model": model_name,
        "embedding_dim": int(embeddings.shape[1]),
        "optimizer": "SGD",
        "momentum": _MOMENTUM,
        "nesterov": True,
        "weight_decay": _WEIGHT_DECAY,
        "schedule": "cosine annealing per step from lr to 0, no warm-up",
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "augment": augment,
        "max_train": max_train,
        "n_train": int(X_fit.shape[0]),
        "n_test": int(X_test.shape[0]),
        "n_embed": int(X_embed.shape[0]),
        "normalize_mean": [float(v) for v in mean],
        "normalize_std": [float(v) for v in std],
        "torch_version": torch.__version__,
        "num_threads": torch.get_num_threads(),
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(device),
    }
    accuracy = float((predictions == y_test).double().mean())
    return EmbeddingResult(embeddings=embeddings.numpy().astype(np.float32, copy=False),
                           labels=y_embed.numpy(), test_accuracy=accuracy, params=params,
                           history=history)


# --------------------------------------------------------------------------------------------
# HDF5


def write_embeddings(path, result: EmbeddingResult, *, attrs: dict | None = None) -> Path:
    """Write ``result`` to the HDF5 file ``path`` atomically.

    Datasets ``embeddings``, ``labels`` and the per-epoch ``history_<key>`` arrays; attributes
    ``format``, ``model``, ``embedding_dim``, ``test_accuracy``, ``params`` (JSON) plus
    ``attrs`` (e.g. ``{"data_source": ...}``).
    """
    reserved = {"format", "model", "embedding_dim", "test_accuracy", "params"}
    clash = sorted(reserved & set(attrs or {}))
    if clash:
        raise ValueError(f"attrs may not set the reserved attribute(s) {clash}")
    embeddings = np.asarray(result.embeddings)
    labels = np.asarray(result.labels)
    if embeddings.ndim != 2 or labels.shape != (embeddings.shape[0],):
        raise ValueError(f"result.embeddings must be 2-D with one label per row; got shapes "
                         f"{embeddings.shape} and {labels.shape}")
    arrays = {"embeddings": embeddings.astype(np.float32, copy=False),
              "labels": labels.astype(np.int64, copy=False)}
    arrays.update({f"history_{key}": np.asarray(value, dtype=np.float64)
                   for key, value in result.history.items()})
    meta = {"format": _FORMAT, "model": str(result.params.get("model", "")),
            "embedding_dim": int(embeddings.shape[1]),
            "test_accuracy": float(result.test_accuracy),
            "params": json.dumps(result.params, sort_keys=True)}
    return write_h5(path, arrays, {**meta, **(attrs or {})})


def read_embeddings(path) -> EmbeddingResult:
    """Read a file written by :func:`write_embeddings`; extra attributes land in ``attrs``."""
    arrays, attrs = read_h5(path)
    if attrs.get("format") != _FORMAT:
        raise ValueError(f"{path}: not an embeddings file (attribute format="
                         f"{attrs.get('format')!r}, expected {_FORMAT!r})")
    missing = [key for key in ("embeddings", "labels") if key not in arrays]
    if missing:
        raise KeyError(f"{path}: embeddings file lacks dataset(s) {missing}")
    history = {key.removeprefix("history_"): value.tolist() for key, value in arrays.items()
               if key.startswith("history_")}
    return EmbeddingResult(embeddings=arrays["embeddings"], labels=arrays["labels"],
                           test_accuracy=float(attrs["test_accuracy"]),
                           params=json.loads(attrs["params"]), history=history, attrs=attrs)

"""Image embeddings from small CNNs trained on CPU (torch; torchvision only for augmentation).

:func:`train_and_embed` trains the MNIST or CIFAR-10 network of :mod:`fedclust.embed.cnn` and
returns the hidden features of a set of images (1,568-d for MNIST, 512-d for CIFAR-10) with the
test accuracy and the training parameters; :func:`write_embeddings` / :func:`read_embeddings`
keep them as HDF5. torchvision is imported through :func:`import_torchvision` only.
"""

from ._torchvision import import_torchvision
from .cnn import (
    MODEL_DEFAULTS,
    MODEL_NAMES,
    Cifar10CNN,
    EmbeddingResult,
    MnistCNN,
    build_model,
    read_embeddings,
    train_and_embed,
    write_embeddings,
)

__all__ = [
    "Cifar10CNN",
    "EmbeddingResult",
    "MODEL_DEFAULTS",
    "MODEL_NAMES",
    "MnistCNN",
    "build_model",
    "import_torchvision",
    "read_embeddings",
    "train_and_embed",
    "write_embeddings",
]

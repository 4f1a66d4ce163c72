"""MNIST (LeCun, Cortes & Burges): the four original idx files.

The files are fetched from the official host (or its long-standing mirror used by torchvision)
or from an offline mirror laid out as ``<mirror>/mnist/<file>``, and verified against the
published md5 and the sha256 of the same bytes.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from .download import RemoteFile, fetch

__all__ = ["MNIST_FILES", "fetch_mnist", "load_mnist", "read_idx"]

_URLS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")


def _mnist_file(name: str, md5: str, sha256: str) -> RemoteFile:
    return RemoteFile(name=name, urls=tuple(base + name for base in _URLS),
                      mirror_path=f"mnist/{name}", md5=md5, sha256=sha256)


MNIST_FILES = {
    "train_images": _mnist_file("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873",
                                "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
    "train_labels": _mnist_file("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432",
                                "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
    "test_images": _mnist_file("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3",
                               "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
    "test_labels": _mnist_file("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c",
                               "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
}

# idx type codes (third byte of the magic number)
_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path) -> np.ndarray:
    """Read an idx file (optionally gzip-compressed) into an array.

    Raises ``ValueError`` naming the file if its header or length is not valid idx.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{path}: not an idx file (bad magic number {raw[:4].hex()})")
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    expected = header + int(np.prod(shape)) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(f"{path}: idx header announces shape {shape} ({expected} bytes) but the "
                         f"file holds {len(raw)} bytes")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)


def fetch_mnist(root, *, mirror=None, progress: bool = True) -> dict[str, Path]:
    """Fetch the four MNIST files into ``root`` (verified); return their paths by role."""
    return {role: fetch(remote, root, mirror=mirror, progress=progress)
            for role, remote in MNIST_FILES.items()}


def load_mnist(root, split: str = "all", *, mirror=None, download: bool = False):
    """Load MNIST as flat images with pixels scaled to ``[0, 1]``.

    Parameters
    ----------
    root : path-like
        Folder holding the four ``*-ubyte.gz`` files.
    split : {"train", "test", "all"}
        ``"all"`` is the 60,000 training images followed by the 10,000 test images.
    mirror : path-like, optional
        Offline mirror to fetch missing files from (only with ``download=True``).
    download : bool
        Fetch missing files first; otherwise a missing file raises ``FileNotFoundError``.

    Returns
    -------
    X : ndarray of shape (n, 784), float32
    y : ndarray of shape (n,), int64
    """
    if split not in {"train", "test", "all"}:
        raise ValueError(f"split must be 'train', 'test' or 'all'; got {split!r}")
    root = Path(root)
    if download:
        fetch_mnist(root, mirror=mirror)
    parts = ["train", "test"] if split == "all" else [split]
    images, labels = [], []
    for part in parts:
        img_path = root / MNIST_FILES[f"{part}_images"].name
        lbl_path = root / MNIST_FILES[f"{part}_labels"].name
        for p in (img_path, lbl_path):
            if not p.is_file():
                raise FileNotFoundError(f"MNIST file missing: {p} (fetch it with fetch_mnist or "
                                        f"the pipeline's fetch_mnist rule)")
        img = read_idx(img_path)
        lbl = read_idx(lbl_path)
        if img.ndim != 3 or lbl.ndim != 1 or img.shape[0] != lbl.shape[0]:
            raise ValueError(f"{img_path} and {lbl_path} do not form an image/label pair: "
                             f"shapes {img.shape} and {lbl.shape}")
        images.append(img.reshape(img.shape[0], -1))
        labels.append(lbl)
    X = np.concatenate(images).astype(np.float32) / np.float32(255.0)
    y = np.concatenate(labels).astype(np.int64)
    return X, y

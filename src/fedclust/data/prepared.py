"""Prepared data sets: the feature matrices every clustering experiment reads, each prepared
once from its raw files (one ``prepare_<name>`` function per data set, :func:`prepare`) into
``data/<name>/features.h5`` (:class:`PreparedData`, :func:`write_prepared`), and the CNN
embeddings (:func:`embed`). The data sets themselves are declared in
:data:`fedclust.pipeline.data.DATASETS`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..io import sha256_of
from ..seeds import seed_for
from ..vocabulary import DATASETS, resolve
from .cache import read_h5, write_h5
from .femnist import load_leaf_femnist, load_tff_emnist_h5
from .mnist import load_mnist
from .postures import POSTURES_SUBSET, load_postures, postures_features
from .shakespeare import build_shakespeare_dataset
from .year_prediction import YEAR_ROWS, load_year_prediction

__all__ = ["PreparedData", "prepare_mnist", "prepare_femnist", "prepare_shakespeare",
           "prepare_postures", "prepare", "prepare_mnist_files", "prepare_femnist_files",
           "prepare_shakespeare_files", "prepare_postures_files", "prepare_year_prediction_files",
           "embed", "write_prepared", "read_prepared"]

log = logging.getLogger(__name__)


@dataclass
class PreparedData:
    """Features of a data set, ready for clustering, as ``data/<name>/features.h5`` holds them.

    Attributes
    ----------
    name : str
        The data set's name (a key of :data:`fedclust.pipeline.data.DATASETS`).
    X : ndarray of shape (n, d), float32
        The features.
    y : ndarray of shape (n,), int64
        Class labels (-1 where the data set has none).
    devices : ndarray of shape (n,), int64
        The natural device of each row (-1 where there is no natural partition): MNIST has
        none; FEMNIST's devices are its writers, Shakespeare's its speaking roles, Postures'
        its users.
    description : str
        The files and the preparation, for the tables' ``data`` column.
    params : dict
        The preparation parameters.
    title : str
        How figures name the data set, saying which release was used (e.g. "CIFAR-10 (JPEG
        re-encoding), CNN features").
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    devices: np.ndarray
    description: str = ""
    params: dict = field(default_factory=dict)
    title: str = ""

    def __post_init__(self):
        if not self.title:
            self.title = DATASETS[self.name].title if self.name in DATASETS else self.name

    @property
    def has_devices(self) -> bool:
        return bool(np.all(self.devices >= 0))


def _subsample(n: int, max_samples, seed: int) -> np.ndarray:
    if not max_samples or max_samples >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=int(max_samples), replace=False))


def prepare_mnist(raw_dir, *, split: str = "all", max_samples=None, seed: int = 0):
    """MNIST pixels in [0, 1] (784 features), optionally a seeded subsample of rows."""
    X, y = load_mnist(raw_dir, split=split)
    rows = _subsample(len(X), max_samples, seed_for(seed, "data", "mnist", "subsample"))
    return PreparedData(
        name="mnist", X=X[rows], y=y[rows], devices=np.full(len(rows), -1, dtype=np.int64),
        description=f"MNIST {split} ({len(rows)} of {len(X)} images), pixels/255",
        params={"split": split, "max_samples": max_samples, "seed": seed})


def prepare_femnist(*, leaf_dirs=None, tff_h5=None, split: str = "all", max_writers=None,
                    seed: int = 0):
    """FEMNIST pixels as stored (784 features in [0, 1], background 1), devices = writers.

    Reads LEAF json directories (``leaf_dirs``) or one TFF HDF5 file (``tff_h5``);
    ``max_writers`` keeps a seeded random subset of writers.
    """
    if (leaf_dirs is None) == (tff_h5 is None):
        raise ValueError("prepare_femnist needs exactly one of leaf_dirs or tff_h5")
    data = load_leaf_femnist(leaf_dirs, split=split) if leaf_dirs is not None else \
        load_tff_emnist_h5(tff_h5)
    writers = data.writers
    if max_writers and max_writers < data.n_writers:
        keep = np.random.default_rng(seed_for(seed, "data", "femnist", "writers")).choice(
            data.n_writers, size=max_writers, replace=False)
        rows = np.flatnonzero(np.isin(writers, keep))
    else:
        rows = np.arange(data.n_samples)
    _, devices = np.unique(writers[rows], return_inverse=True)
    source = "LEAF " + ", ".join(Path(d).name for d in leaf_dirs) if leaf_dirs is not None \
        else f"TFF {Path(tff_h5).name}"
    return PreparedData(
        name="femnist", X=data.X[rows], y=data.y[rows], devices=devices.astype(np.int64),
        description=f"FEMNIST ({source}; {split}): {len(rows)} images of "
                    f"{devices.max() + 1} writers, pixels as stored (background 1)",
        params={"split": split, "max_writers": max_writers, "seed": seed,
                "files": list(data.files)})


def prepare_shakespeare(raw_path, *, n_users: int = 109, max_samples_per_user: int = 2000,
                        min_samples: int = 100, seed: int = 0):
    """Shakespeare (LEAF users = speaking roles), Hellinger character features of 80-char windows.

    ``y`` is the index of the next character (LEAF's target), ``devices`` the role.
    """
    data = build_shakespeare_dataset(raw_path, n_users=n_users,
                                     max_samples_per_user=max_samples_per_user,
                                     min_samples=min_samples,
                                     random_state=seed_for(seed, "data", "shakespeare", "roles"))
    return PreparedData(
        name="shakespeare", X=data.X, y=np.asarray(data.y, dtype=np.int64),
        devices=np.asarray(data.devices, dtype=np.int64),
        description=f"Shakespeare (LEAF preprocessing): {len(data.X)} windows of {n_users} "
                    f"roles (at most {max_samples_per_user} each), sqrt character frequencies",
        params={"n_users": n_users, "max_samples_per_user": max_samples_per_user,
                "min_samples": min_samples, "seed": seed})


def prepare_postures(csv_path, *, max_missing: float = 0.5, standardize: bool = False,
                     columns: str = "markers"):
    """UCI Hand Postures marker coordinates (see :mod:`fedclust.data.postures`), ``y`` = the
    posture class, ``devices`` = the user (the natural partition)."""
    data = load_postures(csv_path)
    X, kept = postures_features(data, max_missing=max_missing, standardize=standardize,
                                columns=columns)
    subset = Path(csv_path).name == POSTURES_SUBSET.name
    # UCI publishes no checksum: name the exact bytes the results come from
    digest = sha256_of(csv_path)
    source = "real subset: classes 1-3, users 0-2" if subset else f"{Path(csv_path).name}"
    return PreparedData(
        name="postures", X=X, y=data.posture, devices=data.user,
        title="Hand Postures (subset: classes 1-3, users 0-2)" if subset else "Hand Postures",
        description=f"UCI Hand Postures ({source}, sha256 {digest[:12]}): {len(X)} rows, "
                    + (f"{len(kept)} marker coordinates (<= {max_missing:.0%} missing, "
                       f"mean-imputed)" if columns == "markers" else
                       f"all {len(kept)} CSV columns incl. Class and User (mean-imputed)")
                    + f", {len(np.unique(data.posture))} postures",
        params={"csv": str(csv_path), "max_missing": max_missing, "standardize": standardize,
                "columns": kept})


def prepare_year_prediction(path, *, max_samples: int | None = None, seed: int = 0,
                            expected_rows: int | None = YEAR_ROWS):
    """YearPredictionMSD's 90 timbre features (Balcan et al., Sec. 5: 515,345 points in
    R^90), ``y`` = the release year, no natural devices; at most ``max_samples`` rows (a
    subset seeded by the data set's name; None keeps every row, as the paper)."""
    X, year = load_year_prediction(path, expected_rows=expected_rows)
    digest = sha256_of(path)
    if max_samples is not None and max_samples < len(X):
        keep = np.sort(np.random.default_rng(seed_for(seed, "data", "year_prediction"))
                       .choice(len(X), size=max_samples, replace=False))
        X, year = X[keep], year[keep]
    whole = len(X) == YEAR_ROWS
    return PreparedData(
        name="year_prediction", X=X, y=year, devices=np.full(len(X), -1, dtype=np.int64),
        title="YearPredictionMSD" if whole else f"YearPredictionMSD ({len(X):,} rows)",
        description=f"UCI YearPredictionMSD ({Path(path).name}, sha256 {digest[:12]}): "
                    f"{len(X):,} songs x {X.shape[1]} timbre features"
                    + ("" if whole else " (a seeded subset of the file's rows)"),
        params={"max_samples": max_samples, "seed": seed, "sha256": digest})


def prepare_mnist_files(inputs, settings, seed):
    return prepare_mnist(Path(inputs[0]).parent, split=settings["split"],
                         max_samples=settings["max_samples"], seed=seed)


def prepare_femnist_files(inputs, settings, seed):
    if all(str(p).endswith(".h5") for p in inputs):  # TFF's release
        train = [p for p in inputs if str(p).endswith("_train.h5")][0]
        return prepare_femnist(tff_h5=train, max_writers=settings["max_writers"], seed=seed)
    dirs = sorted({str(Path(p).parent.parent) for p in inputs})
    return prepare_femnist(leaf_dirs=dirs, split=settings["split"],
                           max_writers=settings["max_writers"], seed=seed)


def prepare_shakespeare_files(inputs, settings, seed):
    return prepare_shakespeare(inputs[0], n_users=settings["n_users"],
                               max_samples_per_user=settings["max_samples_per_user"],
                               min_samples=settings["min_samples"], seed=seed)


def prepare_postures_files(inputs, settings, seed):
    return prepare_postures(inputs[0], max_missing=settings["max_missing"],
                            standardize=settings["standardize"], columns=settings["columns"])


def prepare_year_prediction_files(inputs, settings, seed):
    return prepare_year_prediction(inputs[0], max_samples=settings["max_samples"], seed=seed)


def prepare(name: str, inputs: list[str], settings: dict, *, seed: int) -> PreparedData:
    """Prepare data set ``name`` from its raw files (``fedclust.pipeline.data.raw_files``)
    with its (schema-validated) ``datasets.<name>`` config section, by the function its
    spec names (:attr:`fedclust.vocabulary.DatasetSpec.prepare`)."""
    spec = DATASETS.get(name)
    if spec is None or spec.prepare is None:
        known = [n for n, s in DATASETS.items() if s.prepare]
        raise ValueError(f"{name!r} is not prepared from raw files (known: "
                         f"{', '.join(known)}; embeddings come from "
                         f"fedclust.data.prepared.embed)")
    return resolve(spec.prepare)(inputs, settings, seed)


def embed(name: str, inputs: list[str], settings: dict, *, seed: int, device="cpu"):
    """Train the small CNN of ``name`` (``mnist_cnn`` or ``cifar10_cnn``) on ``device``
    (:func:`fedclust._torch.resolve_device`), record its test accuracy, and embed ``n_embed``
    training images drawn at random.

    The training images are put in a random order (seeded by name) first, so that
    ``n_embed`` and ``max_train`` take a random subset: the JPEG release of CIFAR-10 is stored
    class by class, and its first 10,000 images hold only two classes.

    Returns
    -------
    data : PreparedData
    summary : DataFrame
        One row: source, model, embedding size, test accuracy (the training time is logged).
    """
    import pandas as pd

    from ..embed import train_and_embed
    from .cifar10 import load_cifar10_cache

    if name == "mnist_cnn":
        root = Path(inputs[0]).parent
        X_train, y_train = load_mnist(root, split="train")
        X_test, y_test = load_mnist(root, split="test")
        model, source, title = "mnist", "MNIST (official idx files)", "MNIST, CNN features"
    elif name == "cifar10_cnn":
        images = load_cifar10_cache(inputs[0])
        X_train, y_train = images.X_train, images.y_train
        X_test, y_test = images.X_test, images.y_test
        model, source = "cifar10", f"CIFAR-10, {images.source}"
        jpeg = "jpeg" in images.source.lower()
        title = "CIFAR-10 (JPEG re-encoding), CNN features" if jpeg else \
            "CIFAR-10, CNN features"
    else:
        raise ValueError(f"no embedding for data set {name!r}; expected mnist_cnn or "
                         f"cifar10_cnn")
    X_train, y_train = _shuffled(X_train, y_train, seed=seed_for(seed, "embedding order", name))
    n_embed = min(settings["n_embed"], len(X_train))
    result = train_and_embed(model, X_train, y_train, X_test, y_test, X_train[:n_embed],
                             y_train[:n_embed], epochs=settings["epochs"],
                             max_train=settings["max_train"],
                             seed=seed_for(seed, "embedding", name), device=device)
    features = result.embeddings
    which = "all" if n_embed == len(X_train) else f"a random {n_embed} of the"
    description = (f"{features.shape[1]}-d CNN features of {which} {len(X_train)} training "
                   f"images of {source}; test accuracy {result.test_accuracy:.4f}")
    # the training's timings go to the log and the job's benchmark file, never into the
    # output: the same inputs and seeds give the same bytes
    history = {k: v for k, v in result.history.items() if k != "epoch_seconds"}
    log.info("trained %s in %.1f s (%s epochs)", name,
             float(np.sum(result.history.get("epoch_seconds", [np.nan]))),
             result.params.get("epochs"))
    params = {**result.params, "test_accuracy": result.test_accuracy, "source": source,
              "history": history}
    data = PreparedData(name=name, X=features, y=result.labels,
                        devices=np.full(len(features), -1, dtype=np.int64),
                        description=description, params=params, title=title)
    summary = pd.DataFrame([{
        "dataset": name, "source": source, "model": model,
        "embedding_dim": features.shape[1], "n_embedded": len(features),
        "epochs": result.params.get("epochs"),
        "train_images": settings["max_train"] or len(X_train),
        "test_accuracy": result.test_accuracy,
    }])
    return data, summary


def _shuffled(X, y, *, seed: int):
    """``X`` and ``y`` in one random order, so that any prefix is a random subset."""
    order = np.random.default_rng(seed).permutation(len(X))
    return X[order], y[order]


def write_prepared(data: PreparedData, path) -> Path:
    """Cache ``data`` as HDF5 (atomic)."""
    return write_h5(path, {"X": np.asarray(data.X, dtype=np.float32), "y": data.y,
                           "devices": data.devices},
                    {"name": data.name, "description": data.description, "title": data.title,
                     "params": json.dumps(data.params, default=str)})


def read_prepared(path) -> PreparedData:
    """Read a prepared data set written by :func:`write_prepared`."""
    arrays, attrs = read_h5(path, ["X", "y", "devices"])
    for key in ("name", "description", "params"):
        if key not in attrs:
            raise ValueError(f"{path}: not a prepared data set (attribute {key!r} missing)")
    return PreparedData(name=attrs["name"], X=arrays["X"], y=arrays["y"],
                        devices=arrays["devices"], description=attrs["description"],
                        params=json.loads(attrs["params"]), title=attrs.get("title", ""))

"""The pipeline's names, on the ground floor: what the experiments, the workflow's catalogue
(:mod:`fedclust.pipeline`), the summaries, plots and claims all call a thing.

Imports nothing of fedclust (the Snakefile reads it at parse time, the numeric code at run
time), so any layer can import it and no import circle goes through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

__all__ = ["resolve", "ALGORITHMS", "ALGORITHM_TITLES", "algorithm_rank", "DatasetSpec",
           "DATASETS", "SYNTHETIC", "MIXTURE", "title_of", "dataset_names"]


def resolve(dotted: str) -> Callable:
    """The function a ``"module:function"`` string names (a data set's preparer, a figure's
    plot function): imported only when called, so naming one costs nothing."""
    module, sep, name = dotted.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"{dotted!r} is not a 'module:function' name")
    return getattr(import_module(module), name)

#: The algorithm families as every table names them (``algorithm`` column), in the order
#: tables and legends list them, with how legends and claims name them; a family's
#: configurations are its ``variant``. A family not listed here is named as it is and comes
#: after these.
ALGORITHM_TITLES = {"centralized": "centralized", "kfed": "k-FED",
                    "distributed_lloyd": "distributed Lloyd", "localkmeans": "LocalKMeans",
                    "coreset": "coreset", "fedkmeans": "federated k-means"}
ALGORITHMS = tuple(ALGORITHM_TITLES)
_ALGORITHM_RANK = {name: i for i, name in enumerate(ALGORITHMS)}


def algorithm_rank(algorithms):
    """Sort key of an ``algorithm`` column (``DataFrame.sort_values(key=...)``): the family's
    place in :data:`ALGORITHMS`, any other family after them all (sort stably to keep their
    order)."""
    return algorithms.map(_ALGORITHM_RANK).fillna(len(_ALGORITHM_RANK))


# ------------------------------------------------------------------------------ data sets
@dataclass(frozen=True)
class DatasetSpec:
    """A data set of the pipeline.

    Attributes
    ----------
    name : str
        Key in the config (``datasets.<name>``) and in every results table.
    title : str
        How figures name it; the preparation adds what it cannot know in advance (which
        source was used), and tables carry the result in their ``data_title`` column.
    natural_devices : str or None
        What its natural partition is (``"writers"``, ``"roles"``), None without one.
    embedding : bool
        Its features are a CNN's embedding (rule ``train_embedding``), not the raw data.
    fetch : str
        The rule that fetches its raw files (its ``Release`` in
        :data:`fedclust.pipeline.data.RELEASES`; one release can serve several data sets).
    prepare : str or None
        ``"module:function"`` preparing it from its raw files: ``function(raw file paths, its
        datasets.<name> config section, seed) -> PreparedData``
        (:func:`fedclust.data.prepared.prepare`); None for a CNN embedding, which rule
        ``train_embedding`` makes.
    """

    name: str
    title: str
    natural_devices: str | None
    embedding: bool
    fetch: str
    prepare: str | None = None


_PREPARE = "fedclust.data.prepared:prepare_{}_files"

DATASETS = {spec.name: spec for spec in (
    DatasetSpec("mnist", "MNIST", None, False, "fetch_mnist", _PREPARE.format("mnist")),
    DatasetSpec("femnist", "FEMNIST", "writers", False, "fetch_femnist",
                _PREPARE.format("femnist")),
    DatasetSpec("shakespeare", "Shakespeare", "roles", False, "fetch_shakespeare",
                _PREPARE.format("shakespeare")),
    DatasetSpec("postures", "Hand Postures", "users", False, "fetch_postures",
                _PREPARE.format("postures")),
    DatasetSpec("mnist_cnn", "MNIST, CNN features", None, True, "fetch_mnist"),
    DatasetSpec("cifar10_cnn", "CIFAR-10, CNN features", None, True, "fetch_cifar10"),
    DatasetSpec("year_prediction", "YearPredictionMSD", None, False, "fetch_year_prediction",
                _PREPARE.format("year_prediction")),
)}

#: Data sets drawn inside a job from named seeds (no files to fetch or prepare): name -> title.
SYNTHETIC = {"msd_mixture": "Gaussian mixture of YearPredictionMSD's shape"}

#: The comparison's synthetic data set: k-FED's separated Gaussian mixture, drawn in the job.
MIXTURE = "mixture"



def title_of(name: str) -> str:
    """How figures and captions name data set ``name`` (a synthetic one included; the name
    itself when unknown)."""
    if name in SYNTHETIC:
        return SYNTHETIC[name]
    return DATASETS[name].title if name in DATASETS else str(name)


def dataset_names(*, embedding: bool | None = None, natural: bool | None = None) -> list[str]:
    """Names of the data sets, optionally only (non-)embeddings or those with(out) a natural
    partition."""
    return [s.name for s in DATASETS.values()
            if (embedding is None or s.embedding == embedding)
            and (natural is None or (s.natural_devices is not None) == natural)]

"""Every algorithm of the four papers side by side, on the same partitions of the same data.

None of the papers compares them: k-FED, naive distributed Lloyd, LocalKMeans (several
``L``), the distributed coreset over a star and over a general graph, federated mini-batch
k-means, and k-means on the pooled data (:func:`fedclust.centralized.reference_kmeans`), the
reference every cost is divided by. :func:`compare_setting` runs them on one data set and
partition (its docstring defines the partitions, the shared dropout draws and what is
recorded); :func:`heterogeneity_sweep` moves from the natural partition to IID;
:func:`natural_client_runs` (beyond Triebe & Rajagopal) runs federated k-means on a real
data set's natural clients beside k-FED and LocalKMeans, in the same schema.
"""

from __future__ import annotations

import logging
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial

import numpy as np
import pandas as pd

from ...algorithms import DistributedCoreset, DistributedLloyd, FederatedKMeans, KFed, LocalKMeans
from ...centralized import reference_kmeans
from ...communication import SERVER, Communication
from ...exceptions import InfeasibleSettingError
from ...io import skipped_with_warning, tidy
from ...metrics import clustering_accuracy, kmeans_cost
from ...partitions import partition_devices
from ...progress import progress
from ...seeds import seed_for
from ...topology import Topology
from ...vocabulary import ALGORITHMS
from ..kfed.synthetic import PRINTED_KFED

__all__ = ["ALGORITHMS", "IDS", "Fit", "fits",
           "load_data", "compare_setting", "heterogeneity_sweep", "natural_client_runs",
           "measure"]

log = logging.getLogger(__name__)

#: The columns naming a run of the comparison table.
IDS = ["dataset", "partition", "n_devices", "n_clusters", "algorithm", "variant", "dropout",
       "run", "seed"]


class Fit:
    """One estimator of the comparison: its family, its variant and how to build it."""

    def __init__(self, algorithm: str, variant: str, build: Callable[[int, int], object]):
        self.algorithm, self.variant, self.build = algorithm, variant, build


def fits(cfg: dict, n_clusters: int) -> list[Fit]:
    """The federated estimators of the ``comparison`` config section, each family's variants
    (LocalKMeans per ``L``, the coreset per topology); ``build(seed, n_devices)``."""
    k = n_clusters
    out = [Fit("kfed", f"k'={cfg['device_clusters']}", lambda seed, z: KFed(
               k, cfg["device_clusters"], random_state=seed, **PRINTED_KFED,
               **cfg["kfed"])),
           Fit("distributed_lloyd", "k-means++", lambda seed, z: DistributedLloyd(
               k, random_state=seed, **cfg["distributed_lloyd"]))]
    lkm = cfg["localkmeans"]
    for steps in lkm["local_steps"]:
        out.append(Fit("localkmeans", f"L={steps}", lambda seed, z, steps=steps: LocalKMeans(
            k, steps, n_iter=lkm["n_iter"], init=lkm["init"], random_state=seed)))
    core = cfg["coreset"]
    for graph in core["topologies"]:
        out.append(Fit("coreset", graph, lambda seed, z, graph=graph: DistributedCoreset(
            k, core["coreset_size"], n_init=core["n_init"], tol=core["tol"], init=core["init"],
            refine_max_iter=0, random_state=seed,
            topology=None if graph == "star" else
            Topology.erdos_renyi(z, core["erdos_renyi_p"], random_state=seed))))
    fkm = cfg["fedkmeans"]
    out.append(Fit("fedkmeans", f"C={fkm['sample_fraction']:g}", lambda seed, z: FederatedKMeans(
        k, init="k-means++", random_state=seed, **fkm)))
    return out


def measure(fit: Callable[[], object]):
    """Run ``fit()`` and return its result, wall time (s) and peak traced allocation (MiB)."""
    tracemalloc.start()
    try:
        start = time.perf_counter()
        result = fit()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return result, seconds, peak


def _kept_devices(devices, dropout: float, seed: int) -> np.ndarray:
    """Row mask of the devices that stay when a fraction ``dropout`` of them drops out."""
    ids = np.unique(devices)
    n_drop = int(round(dropout * len(ids)))
    dropped = np.random.default_rng(seed).choice(ids, size=n_drop, replace=False)
    return ~np.isin(devices, dropped)


def _pooled_upload(X, devices) -> Communication:
    """The centralized reference's communication: every device uploads its rows once."""
    comm = Communication(float_bytes=X.itemsize)
    ids, rows = np.unique(devices, return_counts=True)
    comm.send("rows", ids, SERVER, floats=rows * X.shape[1])
    comm.add_rounds(1)
    return comm


def _quality(X, centers, reference_cost, reference_labels, classes) -> dict:
    from ...lloyd import assign

    labels = assign(X, centers)[0]
    out = {"cost_ratio": kmeans_cost(X, centers) / reference_cost,
           "agreement": clustering_accuracy(reference_labels, labels)}
    if classes is not None:
        out["accuracy"] = clustering_accuracy(classes, labels)
    return out


def _runs(X, classes, natural, *, dataset: str, partitions, cfg: dict, n_clusters: int,
          dropouts, base_seed: int, show_progress: bool) -> Iterator[dict]:
    k = int(n_clusters)
    if classes is not None and len(np.unique(classes)) != k:
        classes = None  # accuracy only where k is the number of classes
    estimators = fits(cfg, k)
    todo = [(run, partition, dropout, fit) for run in range(cfg["runs"])
            for partition in partitions for dropout in dropouts
            for fit in [None, *estimators]]
    reference = {}
    for run, partition, dropout, fit in progress(
            todo, desc=f"comparison on {dataset}", disable=not show_progress, unit="fit"):
        if run not in reference:  # the centralized clustering of all the data, once per run
            seed = seed_for(base_seed, "comparison", dataset, "reference", f"k={k}", f"run={run}")
            model = reference_kmeans(X, k, seed=seed, n_init=cfg["centralized_n_init"])
            reference[run] = (model.inertia, model.labels)
        ref_cost, ref_labels = reference[run]
        devices = partition_devices(
            partition, reference_labels=ref_labels, natural=natural,
            n_devices=cfg["n_devices"], device_clusters=cfg["device_clusters"],
            seed=seed_for(base_seed, "comparison", dataset, partition, f"k={k}", f"run={run}"))
        kept = _kept_devices(devices, dropout, seed_for(
            base_seed, "comparison", dataset, partition, f"dropout={dropout}", f"run={run}"))
        algorithm, variant = ("centralized", "k-means++") if fit is None else \
            (fit.algorithm, fit.variant)
        # the variants of one algorithm (a topology, a number of local steps) share their
        # seed: they start from the same draws, so a difference between them is theirs
        seed = seed_for(base_seed, "comparison", dataset, partition, f"k={k}", algorithm,
                        f"dropout={dropout}", f"run={run}")
        ids = {"dataset": dataset, "partition": partition,
               "n_devices": int(len(np.unique(devices))), "n_clusters": k,
               "algorithm": algorithm, "variant": variant, "dropout": float(dropout),
               "run": run, "seed": seed}
        Xk, dk = X[kept], devices[kept]
        if fit is None:
            model, seconds, peak = measure(partial(
                reference_kmeans, Xk, k, seed=seed, n_init=cfg["centralized_n_init"]))
            centers, comm = model.centers, _pooled_upload(Xk, dk)
        else:
            estimator = fit.build(seed, int(dk.max()) + 1)
            try:
                model, seconds, peak = measure(partial(estimator.fit, Xk, devices=dk))
            except InfeasibleSettingError as error:
                yield skipped_with_warning(ids, error, f"{algorithm} {variant} on {dataset}/"
                                           f"{partition} (dropout {dropout:g}, run {run})", log)
                continue
            centers, comm = model.cluster_centers_, model.communication_
        yield {**ids, **_quality(X, centers, ref_cost, ref_labels, classes),
               **comm.ledger(), "wall_s": seconds, "peak_mb": peak}


def load_data(dataset: str, features, cfg: dict, *, base_seed: int):
    """The rows of ``dataset`` the comparison runs on: ``(X, classes, natural devices,
    title)``; at most ``cfg["max_samples"]`` rows (a subset seeded by the data set's name).

    ``cfg`` is the ``comparison`` section with ``n_clusters`` the data set's ``k``.
    ``mixture`` is k-FED's separated Gaussian mixture
    (:func:`~fedclust.data.make_separated_mixture`, ``k`` components in groups of ``k'``,
    ``cfg["mixture"]``) drawn here; a real data set is read
    from its prepared features (``features``, ``data/<name>/features.h5``).
    """
    from ...data import make_separated_mixture
    from ...data.prepared import read_prepared
    from ...vocabulary import MIXTURE

    if dataset == MIXTURE:
        mix_cfg = cfg["mixture"]
        mix = make_separated_mixture(
            cfg["n_clusters"], mix_cfg["n_features"], mix_cfg["separation"],
            samples_per_cluster=mix_cfg["samples_per_cluster"],
            device_clusters=cfg["device_clusters"], devices_per_cluster=5,
            random_state=seed_for(base_seed, "comparison", MIXTURE, "data"))
        X, classes, natural = mix.X, mix.labels, None
        title = f"Gaussian mixture (k = {cfg['n_clusters']}, d = {mix_cfg['n_features']})"
    else:
        data = read_prepared(features)
        X, classes = data.X, data.y
        natural = data.devices if data.has_devices else None
        title = data.title
    limit = cfg["max_samples"]
    if limit and limit < len(X):
        rows = np.sort(np.random.default_rng(
            seed_for(base_seed, "comparison", dataset, "rows")).choice(len(X), limit,
                                                                        replace=False))
        X, classes = X[rows], classes[rows]
        natural = None if natural is None else natural[rows]
    return X, classes, natural, title


def compare_setting(X, classes, natural, *, dataset: str, partition: str, cfg: dict,
                    n_clusters: int, base_seed: int, show_progress: bool = True) -> pd.DataFrame:
    """Every algorithm on one partition of one data set, at every dropout fraction of
    ``cfg["dropout"]`` (the robustness sweep; ``0`` is the plain comparison).

    The partitions: ``iid``, rows dealt uniformly at random over ``n_devices`` devices;
    ``structured``, every device holds rows of a random subset of at most ``k'`` clusters of
    the centralized clustering (k-FED's Sec. 4.2.1,
    :func:`~fedclust.partitions.subset_partition`); ``natural``, the data's own devices
    (FEMNIST writers, Shakespeare roles); ``mix=<f>``, the natural partition with a fraction
    ``f`` of the rows moved to random devices
    (:func:`~fedclust.papers.kfed.federated.mix_partition`). Within a run every algorithm
    sees the same partition and, at each dropout fraction, the same devices dropped (seeds
    named by the data set, partition, fraction and run, never by the algorithm); a dropped
    device's rows are not fitted on but are scored. Recorded per (algorithm, variant,
    dropout, run): ``cost_ratio`` (the k-means cost of the returned centres on every row over
    the centralized cost), ``accuracy`` (where the data set has ``k`` classes),
    ``agreement`` (accuracy against the centralized clustering), the ledger's communication
    (:data:`~fedclust.communication.LEDGER_COLUMNS`; the centralized reference uploads every
    row once), ``wall_s`` and ``peak_mb`` (the fit's peak traced allocation, ``tracemalloc``:
    the compiled kernels' buffers are not seen). A setting an algorithm cannot run is a
    skipped row with its reason.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    classes : ndarray of shape (n,) or None
        Class labels (``accuracy`` is recorded when there are ``n_clusters`` classes).
    natural : ndarray of shape (n,) or None
        The data set's own devices (needed by ``partition="natural"``).
    dataset, partition : str
    cfg : dict
        The ``comparison`` config section.
    n_clusters : int
    base_seed : int

    Returns
    -------
    DataFrame
        Tidy, one row per (:data:`IDS`, metric).

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.papers.comparison.experiments import compare_setting
    >>> rng = np.random.default_rng(0)
    >>> X = np.repeat(np.eye(3) * 20, 40, axis=0) + rng.standard_normal((120, 3))
    >>> cfg = {"runs": 1, "n_devices": 6, "device_clusters": 2, "dropout": [0.0],
    ...        "centralized_n_init": 1, "kfed": {}, "distributed_lloyd": {},
    ...        "localkmeans": {"local_steps": [2], "n_iter": 5, "init": "k-means++"},
    ...        "coreset": {"coreset_size": 30, "topologies": ["star"], "erdos_renyi_p": 0.5,
    ...                    "n_init": 1, "tol": 0, "init": "k-means++"},
    ...        "fedkmeans": {"sample_fraction": 1.0, "n_rounds": 10}}
    >>> table = compare_setting(X, np.repeat(np.arange(3), 40), None, dataset="toy",
    ...                         partition="structured", cfg=cfg, n_clusters=3, base_seed=0,
    ...                         show_progress=False)
    >>> sorted(table.algorithm.unique())
    ['centralized', 'coreset', 'distributed_lloyd', 'fedkmeans', 'kfed', 'localkmeans']
    >>> bool((table[table.metric == "accuracy"].value == 1.0).all())
    True
    """
    records = list(_runs(X, classes, natural, dataset=dataset, partitions=[partition], cfg=cfg,
                         n_clusters=n_clusters, dropouts=cfg["dropout"], base_seed=base_seed,
                         show_progress=show_progress))
    return tidy(records, IDS)


def heterogeneity_sweep(X, classes, natural, *, dataset: str, cfg: dict, n_clusters: int,
                        base_seed: int, show_progress: bool = True) -> pd.DataFrame:
    """Every algorithm from the natural partition towards IID: partition ``mix=<f>`` for every
    ``f`` of ``cfg["mix_fractions"]``, no dropout. Same table as :func:`compare_setting`."""
    partitions = [f"mix={f:g}" for f in cfg["mix_fractions"]]
    records = list(_runs(X, classes, natural, dataset=dataset, partitions=partitions, cfg=cfg,
                         n_clusters=n_clusters, dropouts=[0.0], base_seed=base_seed,
                         show_progress=show_progress))
    return tidy(records, IDS)


def natural_client_runs(X, devices, oracle_cost: float, n_clusters: int, settings: dict, *,
                        dataset: str, base_seed: int, show_progress: bool = True) -> pd.DataFrame:
    """Beyond Triebe & Rajagopal's paper: FederatedKMeans on a real data set's natural clients
    (FEMNIST writers, Shakespeare roles) beside k-FED and LocalKMeans with the same ``k``.

    Every algorithm's k-means cost on all the rows over the oracle's (``oracle_cost``, k-means
    on the pooled data: what never sharing the data costs) and its communication, in the
    comparison's schema (:data:`IDS`; ``partition`` is ``natural``, ``dropout`` 0).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    devices : ndarray of shape (n,)
        The natural clients.
    oracle_cost : float
    n_clusters : int
        ``k`` (the k-FED separation analysis's choice in the pipeline).
    settings : dict
        The ``fedkmeans`` config section with its ``real`` subsection: ``runs``, ``init``,
        ``sample_fractions``, ``local_epochs``, ``client_lr``, ``batch_size``, ``n_rounds``
        (FederatedKMeans; the server rate, momentum and reassignment are the section's),
        ``kfed_device_clusters`` (``k'``), ``localkmeans_local_steps`` and
        ``localkmeans_iterations``.

    Returns
    -------
    DataFrame
        Tidy, one row per (:data:`IDS`, metric): ``cost_ratio`` and the ledger's columns; a
        setting k-FED cannot run is a skipped row.
    """
    from ..fedkmeans.experiments import configured_estimator

    k = int(n_clusters)
    real = settings["real"]
    # the real data's own start and rounds; the box of re-initializations is the data's range
    fits = [Fit("fedkmeans", f"C={c:g}", lambda seed, z, c=c: configured_estimator(
                settings, n_clusters=k, sample_fraction=c, local_epochs=real["local_epochs"],
                batch_size=real["batch_size"], client_lr=real["client_lr"],
                n_rounds=real["n_rounds"], init=real["init"], init_bounds=None,
                random_state=seed))
            for c in real["sample_fractions"]]
    fits.append(Fit("kfed", f"k'={real['kfed_device_clusters']}", lambda seed, z: KFed(
        k, real["kfed_device_clusters"], **PRINTED_KFED, random_state=seed)))
    fits.append(Fit("localkmeans", f"L={real['localkmeans_local_steps']}",
                    lambda seed, z: LocalKMeans(k, real["localkmeans_local_steps"],
                                             n_iter=real["localkmeans_iterations"],
                                             init=real["localkmeans_init"],
                                             random_state=seed)))
    n_devices = int(len(np.unique(devices)))
    rows = []
    todo = [(fit, run) for fit in fits for run in range(real["runs"])]
    for fit, run in progress(todo, desc=f"federated k-means on {dataset}",
                             disable=not show_progress):
        # seeds keep the names these runs had before they moved here (stable names: the
        # same draws as before the rename of their families)
        seed = seed_for(base_seed, "fedkmeans", "real", dataset, f"k={k}",
                        _NATURAL_SEED_NAMES.get(fit.algorithm, fit.algorithm), fit.variant,
                        f"run={run}")
        ids = {"dataset": dataset, "partition": "natural", "n_devices": n_devices,
               "n_clusters": k,
               "algorithm": fit.algorithm, "variant": fit.variant, "dropout": 0.0, "run": run,
               "seed": seed}
        try:
            model = fit.build(seed, n_devices).fit(X, devices=devices)
        except InfeasibleSettingError as error:
            rows.append(skipped_with_warning(
                ids, error, f"{fit.algorithm} {fit.variant} on {dataset}, run {run}", log))
            continue
        rows.append({**ids, "cost_ratio": kmeans_cost(X, model.cluster_centers_) / oracle_cost,
                     **model.communication_.ledger()})
    return tidy(rows, IDS)


#: The seed names of :func:`natural_client_runs`' families from before they took the
#: comparison's names (k-FED was ``k-fed``, federated k-means ``federated_kmeans``).
_NATURAL_SEED_NAMES = {"kfed": "k-fed", "fedkmeans": "federated_kmeans"}


"""Triebe & Rajagopal (2019) as experiments, in tidy tables: Sec. 2.1's synthetic clients
(:func:`make_client_gaussians`), the hyper-parameter sweeps of Figs 1-5 (:func:`sweep_runs`) and
the progress runs of Figs 6-7 (:func:`progress_runs`). Every (sweep, value, seed) draws from its
own named seed, and the data of seed ``s`` is the same in every sweep and setting, so settings
are compared on the same clients. The real data sets' natural clients are run, beside k-FED and
LocalKMeans, by :func:`fedclust.papers.comparison.experiments.natural_client_runs`.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..._validation import check_choice, check_int
from ...algorithms.federated_kmeans import FederatedKMeans
from ...io import tidy
from ...lloyd import assign
from ...metrics import davies_bouldin_centers, gaussians_found, mean_distance
from ...progress import progress
from ...seeds import generator_for, seed_for
from . import CENTRAL

__all__ = ["VARIED", "CENTRAL", "SWEEP_IDS", "PROGRESS_IDS", "make_client_gaussians",
           "client_data", "estimator_for", "central_estimator", "sweep_runs",
           "progress_runs", "configured_estimator"]

log = logging.getLogger(__name__)

#: The hyper-parameters a sweep can vary: config name -> FederatedKMeans parameter.
VARIED = {"sample_fraction": "sample_fraction", "local_epochs": "local_epochs",
          "client_lr": "client_lr"}
PROGRESS_IDS = ("progress", "data_means", "round", "cluster")
SWEEP_IDS = ("sweep", "varied", "position", "setting", "seed", "run_seed", "sample_fraction",
             "local_epochs", "client_lr", "split")


def make_client_gaussians(n_clients: int, samples_per_client: int, means, scale: float, *,
                          assignment: str = "balanced", random_state=None):
    """Sec. 2.1: every client's rows drawn from one Gaussian ``N(mean, scale^2)`` in 1-D.

    ``assignment="balanced"`` gives client ``i`` the Gaussian ``i mod len(means)`` (the
    authors' code: as many clients per Gaussian); ``"random"`` draws it uniformly (the
    paper's "randomly sampled from one of 5 Gaussians" read per client).

    Returns
    -------
    X : ndarray of shape (n_clients * samples_per_client, 1)
    devices : ndarray of shape (n,)
    component : ndarray of shape (n,)
        The Gaussian of every row.

    Examples
    --------
    >>> X, devices, component = make_client_gaussians(10, 4, [1, 2], 0.2, random_state=0)
    >>> X.shape, np.bincount(component).tolist()
    ((40, 1), [20, 20])
    """
    check_int(n_clients, "n_clients", low=1)
    check_int(samples_per_client, "samples_per_client", low=1)
    check_choice(assignment, "assignment", {"balanced", "random"})
    means = np.asarray(means, dtype=np.float64)
    if not scale > 0:
        raise ValueError(f"scale must be positive; got {scale!r}")
    rng = np.random.default_rng(random_state)
    per_client = np.arange(n_clients) % len(means) if assignment == "balanced" \
        else rng.integers(0, len(means), n_clients)
    component = np.repeat(per_client, samples_per_client)
    X = means[component][:, None] + rng.normal(0.0, scale, (len(component), 1))
    return X, np.repeat(np.arange(n_clients), samples_per_client), component


def client_data(data: dict, seed: int, base_seed: int):
    """Training and test clients of seed ``seed`` (the same in every sweep): ``{split: (X,
    devices)}``."""
    out = {}
    for split, key in (("train", "n_clients"), ("test", "n_test_clients")):
        X, devices, _ = make_client_gaussians(
            data[key], data["samples_per_client"], data["means"], data["scale"],
            assignment=data["assignment"],
            random_state=generator_for(seed_for(base_seed, "federated_kmeans", "data",
                                                f"seed={seed}"), split))
        out[split] = (X, devices)
    return out


def configured_estimator(settings: dict, **overrides) -> FederatedKMeans:
    """FederatedKMeans with the section's hyper-parameters, ``overrides`` replacing some.

    Every parameter of the estimator is given (the paper's values, from the config), none
    left to the estimator's defaults, which are not the paper's (``init``,
    ``sample_fraction``)."""
    params = {"n_clusters": settings["n_clusters"], "batch_size": settings["batch_size"],
              "server_lr": settings["server_lr"], "server_momentum": settings["server_momentum"],
              "server_momentum_style": settings["server_momentum_style"],
              "n_rounds": settings["n_rounds"], "tol": settings["tol"],
              "init": settings["init"],
              "init_bounds": tuple(settings["init_bounds"]),
              "reassign_fraction": settings["reassign_fraction"],
              "reassign_after": settings["reassign_after"],
              "reassign_basis": settings["reassign_basis"]}
    params = {**params, **overrides}
    missing = set(FederatedKMeans().get_params()) - set(params) - {"random_state"}
    if missing:  # pragma: no cover - a new estimator parameter the config does not set
        raise ValueError(f"federated k-means: set {', '.join(sorted(missing))} explicitly")
    return FederatedKMeans(**params)


def estimator_for(settings: dict, *, sample_fraction, local_epochs, client_lr,
                  n_rounds=None, random_state=None) -> FederatedKMeans:
    """FederatedKMeans with the section's fixed hyper-parameters and the given varied ones
    (full batches unless the section sets ``batch_size``)."""
    return configured_estimator(settings, sample_fraction=sample_fraction,
                                local_epochs=local_epochs, client_lr=client_lr,
                                n_rounds=n_rounds or settings["n_rounds"],
                                random_state=random_state)


def central_estimator(settings: dict, *, n_rounds=None, random_state=None) -> FederatedKMeans:
    """Central k-means as the paper runs it: Lloyd's iterations from the same uniform start,
    with the same reassignment rule -- FederatedKMeans on one client holding every row, with
    ``C = E = alpha = beta = 1``, no momentum and full batches."""
    return configured_estimator(settings, sample_fraction=1.0, local_epochs=1, batch_size=None,
                                server_lr=1.0, server_momentum=None, client_lr=1.0,
                                n_rounds=n_rounds or settings["n_rounds"],
                                random_state=random_state)


def _evaluate(model, data: dict) -> dict[str, dict[str, float]]:
    """``{split: {metric: value}}`` of a fitted model on the training and the test clients."""
    out = {}
    centers = model.cluster_centers_
    for split, (X, _) in data.items():
        labels, _ = assign(X, centers)
        used = len(np.unique(labels))
        out[split] = {"mean_distance": mean_distance(X, centers, labels),
                      "clusters_used": float(used)}
        if used >= 2:  # the index of fewer than two clusters is undefined: no row
            out[split]["davies_bouldin"] = davies_bouldin_centers(X, centers, labels)
    return out


def sweep_runs(sweep: str, spec: dict, settings: dict, *, base_seed: int,
               show_progress: bool = True) -> pd.DataFrame:
    """One sweep: every value of ``spec["vary"]`` (central k-means too when it is
    ``sample_fraction``) on every seed, evaluated on the training and the test clients.

    Parameters
    ----------
    sweep : str
        Its name (a figure of the paper, e.g. ``fig1``), part of every run's seed.
    spec : dict
        ``vary`` (a key of :data:`VARIED`), ``values`` (None: the section's
        ``sample_fractions``) and the other two of ``sample_fraction``, ``local_epochs``,
        ``client_lr`` fixed; optionally ``reassign_after`` and ``reassign_basis`` in place of
        the section's, and ``seeds_of``, the sweep whose run seeds this one uses (a second
        reading of that sweep on the same seeds).
    settings : dict
        The ``federated_kmeans`` config section.

    Returns
    -------
    DataFrame
        Tidy (:data:`SWEEP_IDS`, ``metric``, ``value``; ``position`` is the setting's place
        in the sweep, the order of the figure's axis): ``mean_distance``,
        ``davies_bouldin`` (of the model's centers), ``clusters_used`` per split, and per run
        (split ``all``) the communication (:data:`fedclust.communication.LEDGER_COLUMNS`),
        ``reassigned`` clusters and ``gaussians_missed``, the Gaussians left without a
        centroid of their own (:func:`fedclust.metrics.gaussians_found`).
    """
    vary = check_choice(spec["vary"], "vary", set(VARIED))
    values = list(spec.get("values") or settings["sample_fractions"])
    if vary == "sample_fraction":
        values.append(CENTRAL)
    fixed = {name: spec.get(name) for name in VARIED if name != vary}
    missing = [name for name, value in fixed.items() if value is None]
    if missing:
        raise ValueError(f"federated_kmeans.sweeps.{sweep}: set {', '.join(missing)} (the "
                         f"hyper-parameters it does not vary)")
    settings = {**settings, **{key: spec[key] for key in ("reassign_after", "reassign_basis")
                               if key in spec}}
    seeded_as = spec.get("seeds_of", sweep)
    rows = []
    seeds = range(settings["seeds"])
    clients = {s: client_data(settings["data"], s, base_seed) for s in seeds}
    todo = [(value, s) for value in values for s in seeds]
    for value, s in progress(todo, desc=f"federated k-means {sweep}", disable=not show_progress):
        data = clients[s]
        run_seed = seed_for(base_seed, "federated_kmeans", seeded_as, f"{vary}={value}",
                            f"seed={s}")
        if value == CENTRAL:
            X, _ = data["train"]
            model = central_estimator(settings, random_state=run_seed)
            model.fit(X, devices=np.zeros(len(X), dtype=np.int64))
            params = dict.fromkeys(VARIED, CENTRAL)
        else:
            params = {**fixed, vary: value}
            model = estimator_for(settings, random_state=run_seed, **params)
            X, devices = data["train"]
            model.fit(X, devices=devices)
        ids = {"sweep": sweep, "varied": vary, "position": values.index(value),
               "setting": str(value), "seed": s,
               "run_seed": run_seed, **{k: str(v) for k, v in params.items()}}
        for split, metrics in _evaluate(model, data).items():
            rows.append({**ids, "split": split, **metrics})
        rows.append({**ids, "split": "all", **model.communication_.ledger(),
                     "reassigned": float(model.n_reassigned_),
                     "gaussians_missed": float(len(settings["data"]["means"]) - gaussians_found(
                         model.cluster_centers_, settings["data"]["means"]))})
    table = tidy(rows, SWEEP_IDS)
    # a metric a split does not have (the index of fewer than two clusters; the run's
    # communication on a split) is absent, not NaN
    return table.dropna(subset=["value"]).reset_index(drop=True)


def progress_runs(name: str, spec: dict, settings: dict, *, base_seed: int,
                  seed: int = 0) -> pd.DataFrame:
    """Figs 6-7: one run's centroids after every round (``spec["central"]``: central k-means
    for ``spec["n_rounds"]`` iterations, Fig 6) and the standard deviation of the training
    rows nearest to each (the authors' progress plots), round 0 being the start.

    Returns
    -------
    DataFrame
        Tidy (:data:`PROGRESS_IDS`, ``metric``, ``value``): ``center``, ``spread`` and
        ``rows`` of every centroid after every round (a centroid no row is nearest to has
        ``rows`` 0 and ``spread`` 0; ``data_means``: the Gaussians' means, space-separated,
        for the figure).
    """
    data = client_data(settings["data"], seed, base_seed)
    run_seed = seed_for(base_seed, "federated_kmeans", "progress", name, f"seed={seed}")
    X, devices = data["train"]
    means = " ".join(f"{m:g}" for m in settings["data"]["means"])
    records = []

    def keep(state):
        labels, _ = assign(X, state.centers)
        k = len(state.centers)
        rows = np.bincount(labels, minlength=k)
        sums = np.bincount(labels, weights=X[:, 0], minlength=k)
        squares = np.bincount(labels, weights=X[:, 0] ** 2, minlength=k)
        mean = np.divide(sums, rows, out=np.zeros(k), where=rows > 0)
        var = np.divide(squares, rows, out=np.zeros(k), where=rows > 0) - mean ** 2
        for j in range(k):
            records.append({"progress": name, "round": state.round, "cluster": j,
                            "center": float(state.centers[j, 0]),
                            "spread": float(np.sqrt(max(var[j], 0.0))), "rows": int(rows[j]),
                            "data_means": means})

    if spec.get("central"):
        model = central_estimator(settings, n_rounds=spec["n_rounds"], random_state=run_seed)
        model.fit(X, devices=np.zeros(len(X), dtype=np.int64), callback=keep)
    else:
        model = estimator_for(settings, sample_fraction=spec["sample_fraction"],
                              local_epochs=spec["local_epochs"], client_lr=spec["client_lr"],
                              n_rounds=spec["n_rounds"], random_state=run_seed)
        model.fit(X, devices=devices, callback=keep)
    return tidy(records, PROGRESS_IDS)

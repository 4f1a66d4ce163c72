"""LocalKMeans experiments: synthetic Gaussian mixtures (Figs 1, 4) and real embeddings (Figs 2, 3).

The synthetic model is Lu & Zhou's (2016), whom the LocalKMeans paper follows: ``K``
orthonormal centers, isotropic noise set from the requested signal-to-noise ratio, the rows
dealt at random over ``M`` machines; misclustering is scored per iteration by a
:class:`fedclust.rounds.History` callback, outside the estimator. The model's formula, the
initializations and how the trials share seeds across ``L`` and the swept values:
``docs/data.md`` (LocalKMeans' synthetic model).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int, check_random_state
from ...algorithms import LocalKMeans
from ...metrics import misclustering_by_group, misclustering_rate
from ...partitions import iid_partition
from ...progress import progress
from ...rounds import History
from ...seeds import generator_for, seed_for
from . import FIG4_SWEEPS, INIT_FILE_NAMES, OTHER_HOLD
from .snr import noise_std_for_snr, separation_for_snr, snr_of

__all__ = ["noise_std_for_snr", "snr_of", "make_orthonormal_mixture", "synthetic_factory",
           "perturbed_centers", "local_steps_label", "parse_local_steps", "trajectory_runs",
           "parameter_sweep", "separation_for_snr", "fig1_panel", "fig4_sweep",
           "real_data_runs"]


def make_orthonormal_mixture(n_clusters: int, n_features: int, n_samples: int, snr: float,
                             random_state=None):
    """Sample the synthetic model of the module docstring.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
        Equal cluster sizes (to within one), in random order.
    centers : ndarray of shape (n_clusters, n_features)
        Orthonormal rows (``s = 1``, ``Delta = sqrt(2)``).
    sigma : float
    """
    K = check_int(n_clusters, "n_clusters", low=2)
    d = check_int(n_features, "n_features", low=K)
    n = check_int(n_samples, "n_samples", low=K)
    rng = check_random_state(random_state)
    q, _ = np.linalg.qr(rng.standard_normal((d, K)))
    centers = q.T
    sigma = noise_std_for_snr(snr, np.sqrt(2.0), n_clusters=K, n_features=d, n_samples=n)
    labels = rng.permutation(np.arange(n) % K)
    X = centers[labels] + sigma * rng.standard_normal((n, d))
    return X, labels, centers, sigma


def synthetic_factory(n_clusters: int, n_features: int, n_samples: int, snr: float):
    """An ``X_factory`` for :func:`trajectory_runs` drawing the synthetic model."""
    def factory(rng):
        X, labels, centers, _ = make_orthonormal_mixture(n_clusters, n_features, n_samples, snr,
                                                         rng)
        return X, labels, centers
    return factory


def perturbed_centers(centers: np.ndarray, perturbation: float, random_state=None) -> np.ndarray:
    """Every center moved by ``perturbation * Delta`` in a uniformly random direction
    (``Delta`` the minimum distance between two centers)."""
    rng = check_random_state(random_state)
    gaps = np.linalg.norm(centers[:, None] - centers[None], axis=-1)
    delta = gaps[~np.eye(len(centers), dtype=bool)].min()
    direction = rng.standard_normal(centers.shape)
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return centers + perturbation * delta * direction


def local_steps_label(local_steps) -> str:
    """How a value of ``L`` is shown in tables and legends."""
    return "no aggregation" if local_steps is None else f"L={int(local_steps)}"


def parse_local_steps(values, n_iter: int) -> list:
    """Config values of ``L``: ints, ``"T/2"`` (half the iterations) and null (no
    aggregation)."""
    out = []
    for v in values:
        if v is None or v == "none":
            out.append(None)
        elif v == "T/2":
            out.append(max(1, n_iter // 2))
        else:
            out.append(check_int(v, "local_steps", low=1))
    return out


def _initial(init: str, centers, perturbation, seed):
    if init == "perturbed":
        if centers is None:
            raise ValueError("init 'perturbed' needs the true centers (synthetic data only)")
        return perturbed_centers(centers, perturbation, seed)
    if init == "k-means++":
        return "k-means++"
    raise ValueError(f"init must be one of {sorted(INIT_FILE_NAMES)}; got {init!r}")


def _scores(labels, machines, n_machines):
    """Round metrics scored against the reference ``labels`` (evaluation outside the fit)."""
    return {
        "misclustering": lambda s: misclustering_rate(labels, s.labels),
        "mean_machine_misclustering": lambda s: float(np.nanmean(
            misclustering_by_group(labels, s.labels, machines, n_machines))),
    }


_ROUND_METRICS = ("misclustering", "objective", "global_objective",
                  "mean_machine_misclustering")


def trajectory_runs(*, X_factory, local_steps, n_iter: int, n_machines: int, trials: int,
                    base_seed: int, names, init: str, perturbation: float,
                    keys: dict | None = None, seed_names=None,
                    show_progress: bool = True) -> pd.DataFrame:
    """Misclustering and objective at every iteration, for every ``L``, over trials.

    Parameters
    ----------
    X_factory : callable(rng) -> (X, labels, centers or None)
        Draws (synthetic) or returns (real) the data of one trial.
    local_steps : list
        Values of ``L``: ints, ``"T/2"``, or ``None`` for no aggregation.
    names : tuple
        Names of the setting (experiment, data set, SNR, ...): with the trial they name its
        seed.
    keys : dict
        Columns identifying the setting (data set, SNR, ...), copied to every row.
    seed_names : tuple, optional
        Names the trial seeds come from instead of ``names`` (a sweep shares them across its
        values: see :func:`parameter_sweep`).

    Returns
    -------
    DataFrame
        Tidy: one row per trial, ``L``, iteration and metric (``misclustering``,
        ``objective``, ``global_objective``, ``mean_machine_misclustering``), plus the run's
        communication as metrics at the final iteration
        (:data:`fedclust.communication.LEDGER_COLUMNS`).
    """
    keys = dict(keys or {})
    steps = parse_local_steps(local_steps, n_iter)
    frames = []
    for trial in progress(range(trials), desc=f"LocalKMeans {' '.join(map(str, names))}",
                          disable=not show_progress):
        seed = seed_for(base_seed, "localkmeans", *(names if seed_names is None else seed_names),
                        f"trial={trial}")
        X, labels, centers = X_factory(generator_for(seed, "data"))
        machines = iid_partition(len(X), n_machines, random_state=seed_for(seed, "machines"))
        start = _initial(init, centers, perturbation, seed_for(seed, "perturbation"))
        n_clusters = int(labels.max()) + 1
        for L in steps:
            # every L starts from the same initialization and partition (same seeds)
            history = History(_scores(labels, machines, n_machines))
            model = LocalKMeans(n_clusters, L, n_iter=n_iter, init=start,
                                random_state=seed_for(seed, "LocalKMeans++"))
            model.fit(X, devices=machines, callback=history)
            rounds = history.to_frame()
            base = {**keys, "init": init, "n_machines": n_machines, "n_iter": n_iter,
                    "local_steps": local_steps_label(L), "trial": trial, "seed": seed}
            for metric in _ROUND_METRICS:
                frames.append(pd.DataFrame({**base, "iteration": rounds["round"].to_numpy(),
                                            "metric": metric,
                                            "value": rounds[metric].to_numpy()}))
            ledger = model.communication_.ledger()
            frames.append(pd.DataFrame({**base, "iteration": n_iter, "metric": list(ledger),
                                        "value": list(ledger.values())}))
    return pd.concat(frames, ignore_index=True)


def parameter_sweep(*, parameter: str, values, make_setting, local_steps, n_iter: int,
                    trials: int, base_seed: int, names, init: str, perturbation: float,
                    shared_seeds: bool = True, show_progress: bool = True) -> pd.DataFrame:
    """Figure 4: the trajectories of :func:`trajectory_runs` as one parameter varies.

    ``make_setting(value)`` returns ``(X_factory, n_machines, keys)`` for one value of the swept
    parameter; every iteration is kept (the figure draws the curves and the final values).
    With ``shared_seeds`` (the default) trial ``i`` has the same seed at every value, so the
    values are compared on common random numbers: the same points dealt over 10 or 80
    machines, the same noise scaled to each SNR, the same LocalKMeans++ stream; a difference
    between two values is then not a difference of seeds. Either way a value's rows do not
    depend on which other values are swept.
    """
    frames = []
    for value in values:
        factory, n_machines, keys = make_setting(value)
        table = trajectory_runs(X_factory=factory, local_steps=local_steps, n_iter=n_iter,
                                n_machines=n_machines, trials=trials, base_seed=base_seed,
                                names=(*names, f"{parameter}={value}"), init=init,
                                perturbation=perturbation,
                                keys={"sweep": parameter, parameter: value, **keys},
                                seed_names=(*names, parameter) if shared_seeds else None,
                                show_progress=show_progress)
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def fig1_panel(synthetic: dict, settings: dict, *, snr: float, init: str, base_seed: int,
               show_progress: bool = True) -> pd.DataFrame:
    """Figure 1, one panel: every ``L`` at one SNR and one initialization, all trials.

    ``synthetic`` and ``settings`` are the ``localkmeans.synthetic`` and ``localkmeans.fig1``
    config sections.
    """
    K, d = synthetic["n_clusters"], synthetic["n_features"]
    M, per = synthetic["n_machines"], synthetic["samples_per_machine"]
    return trajectory_runs(
        X_factory=synthetic_factory(K, d, M * per, snr), local_steps=settings["local_steps"],
        n_iter=synthetic["n_iter"], n_machines=M, trials=settings["trials"],
        base_seed=base_seed, names=("fig1", f"snr={snr}", f"init={init}"), init=init,
        perturbation=synthetic["perturbation"],
        keys={"n_clusters": K, "n_features": d, "samples_per_machine": per, "snr": snr},
        show_progress=show_progress)


def fig4_sweep(sweep: str, synthetic: dict, settings: dict, *, base_seed: int,
               show_progress: bool = True) -> pd.DataFrame:
    """Figure 4, one sweep (App. B.2): misclustering after ``T`` iterations as the SNR, ``K``
    (``samples_per_machine`` per machine) or ``M`` (``total_samples`` in all) varies.

    In the ``K`` sweep, ``settings["n_clusters_holds"]`` says what stays fixed as ``K`` grows:
    ``"separation"`` (the default) holds the clusters' geometry, ``Delta / sigma``, at its value
    for ``sweep_snr`` at ``K = synthetic["n_clusters"]`` (so Lu & Zhou's ``r`` falls as ``K``
    grows, through ``alpha = 1/K`` and ``K d / n``); ``"snr"`` holds ``r`` at ``sweep_snr``
    (``Delta / sigma`` then grows with ``K``); sweep ``"n_clusters_other"`` is the same K sweep,
    with the same trial seeds, holding the other one (its table's ``sweep`` says so). Every
    table carries the ``snr`` and the ``separation`` (``Delta / sigma``) of each value. Trial
    seeds are shared across the values of a sweep (:func:`parameter_sweep`)."""
    if sweep not in FIG4_SWEEPS:
        raise ValueError(f"sweep must be one of {FIG4_SWEEPS}; got {sweep!r}")
    holds = settings.get("n_clusters_holds", "separation")
    if holds not in OTHER_HOLD:
        raise ValueError(f"n_clusters_holds must be 'separation' or 'snr'; got {holds!r}")
    if sweep == "n_clusters_other":
        # the same K sweep (same trial seeds) holding the other quantity: the second reading
        table = fig4_sweep("n_clusters", synthetic,
                           {**settings, "n_clusters_holds": OTHER_HOLD[holds]},
                           base_seed=base_seed, show_progress=show_progress)
        return table.assign(sweep=sweep)
    K, d = synthetic["n_clusters"], synthetic["n_features"]
    M, per = synthetic["n_machines"], synthetic["samples_per_machine"]
    snr0, total = settings["sweep_snr"], settings["total_samples"]
    separation0 = separation_for_snr(snr0, n_clusters=K, n_features=d, n_samples=M * per)

    def geometry(snr, k, dim, n):
        return {"snr": snr, "separation": separation_for_snr(snr, n_clusters=k,
                                                             n_features=dim, n_samples=n)}

    def make_setting(value):
        # every sweep's table has the same columns: the fixed sizes beside the swept one
        if sweep == "snr":
            return (synthetic_factory(K, d, M * per, value), M,
                    {**geometry(value, K, d, M * per), "n_clusters": K, "n_machines": M,
                     "samples_per_machine": per, "n_samples": M * per})
        if sweep == "n_clusters":
            dim = max(d, value)
            snr = snr0 if holds == "snr" else float(snr_of(
                separation0, 1.0, n_clusters=value, n_features=dim, n_samples=M * per))
            return (synthetic_factory(value, dim, M * per, snr), M,
                    {**geometry(snr, value, dim, M * per), "n_machines": M,
                     "samples_per_machine": per, "n_samples": M * per})
        return (synthetic_factory(K, d, total, snr0), value,
                {**geometry(snr0, K, d, total), "n_clusters": K,
                 "samples_per_machine": total // value, "n_samples": total})

    return parameter_sweep(parameter=sweep, values=settings[sweep], make_setting=make_setting,
                           local_steps=settings["local_steps"], n_iter=synthetic["n_iter"],
                           trials=settings["trials"], base_seed=base_seed, names=("fig4",),
                           init=settings["init"], perturbation=synthetic["perturbation"],
                           show_progress=show_progress)


def real_data_runs(data, settings: dict, *, base_seed: int,
                   show_progress: bool = True) -> pd.DataFrame:
    """Figures 2 and 3 on one prepared data set: every ``L``, all trials, every iteration.

    ``settings`` is the ``localkmeans.real`` config section: ``n_machines`` machines of
    ``samples_per_machine[data set]`` rows each (App. B.1, Table 1: 500 for the embeddings;
    ``null`` splits the whole data set, as for Postures' 78,095 rows over 100 machines). A trial
    draws its own rows when the data set has more.
    """
    X = np.asarray(data.X, dtype=np.float64)
    _, y = np.unique(data.y, return_inverse=True)
    M = settings["n_machines"]
    per = settings["samples_per_machine"].get(data.name)
    take = M * per if per and M * per < len(X) else len(X)

    def factory(rng):
        rows = np.sort(rng.choice(len(X), size=take, replace=False)) if take < len(X) else \
            np.arange(len(X))
        return X[rows], y[rows], None

    table = trajectory_runs(X_factory=factory, local_steps=settings["local_steps"],
                            n_iter=settings["n_iter"], n_machines=M, trials=settings["trials"],
                            base_seed=base_seed, names=("real", data.name),
                            init=settings["init"], perturbation=0.0,
                            keys={"dataset": data.name, "n_rows": take,
                                  "n_features": X.shape[1], "n_clusters": int(y.max()) + 1},
                            show_progress=show_progress)
    table.insert(1, "data", data.description)
    table.insert(2, "data_title", data.title)
    return table

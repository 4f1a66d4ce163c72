"""LocalKMeans experiments: synthetic Gaussian mixtures (Figs 1, 4) and real embeddings (Figs 2, 3).

Synthetic model (following Lu & Zhou, 2016, whom the LocalKMeans paper follows): ``K`` centers
``theta_k = s u_k`` with ``u_1..u_K`` orthonormal in ``R^d`` (so the minimum separation is
``Delta = s sqrt(2)``), equal cluster sizes, isotropic noise ``N(0, sigma^2 I_d)``. The
signal-to-noise ratio is Lu & Zhou's

    r = (Delta / sigma) * sqrt(alpha / (1 + K d / n)),

with ``alpha`` the smallest cluster fraction (``1/K`` here) and ``n`` the total number of
samples; ``sigma`` is set from the requested ``r`` with ``s = 1``. The data are dealt uniformly
at random over ``M`` machines. The *perturbed* initialization moves every true center by
``perturbation * Delta`` in a uniformly random direction; *LocalKMeans++* is exact distributed
k-means++. Misclustering is the share of points mislabeled under the best permutation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .._validation import check_int, check_random_state, check_real
from ..algorithms import LocalKMeans
from ..federation import iid_partition
from ._seeds import run_seed

__all__ = ["noise_std_for_snr", "snr_of", "make_orthonormal_mixture", "synthetic_factory",
           "perturbed_centers",
           "local_steps_label", "trajectory_runs", "final_error_sweep"]


def snr_of(delta: float, sigma: float, *, n_clusters: int, n_features: int, n_samples: int,
           alpha: float | None = None) -> float:
    """Lu & Zhou's signal-to-noise ratio ``(Delta/sigma) sqrt(alpha / (1 + K d / n))``."""
    alpha = 1.0 / n_clusters if alpha is None else alpha
    return delta / sigma * np.sqrt(alpha / (1.0 + n_clusters * n_features / n_samples))


def noise_std_for_snr(snr: float, delta: float, *, n_clusters: int, n_features: int,
                      n_samples: int, alpha: float | None = None) -> float:
    """The ``sigma`` giving signal-to-noise ratio ``snr`` (inverse of :func:`snr_of`)."""
    check_real(snr, "snr", low=0.0, low_inclusive=False)
    return snr_of(delta, 1.0, n_clusters=n_clusters, n_features=n_features,
                  n_samples=n_samples, alpha=alpha) / snr


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


def _parse_local_steps(values, n_iter):
    """Config values of L: ints, "T/2" (half the iterations) and null (no aggregation)."""
    out = []
    for v in values:
        if v is None or v == "none":
            out.append(None)
        elif v == "T/2":
            out.append(max(1, n_iter // 2))
        else:
            out.append(check_int(v, "local_steps", low=1))
    return out


def _initial(init: str, X, labels, centers, perturbation, rng):
    if init == "perturbed":
        return perturbed_centers(centers, perturbation, rng)
    if init == "k-means++":
        return "k-means++"
    raise ValueError(f"init must be 'k-means++' or 'perturbed'; got {init!r}")


def trajectory_runs(*, X_factory, local_steps, n_iter: int, n_machines: int, trials: int,
                    base_seed: int, init: str = "k-means++", perturbation: float = 0.3,
                    keys: dict | None = None, progress: bool = True) -> pd.DataFrame:
    """Misclustering and objective at every iteration, for every ``L``, over trials.

    Parameters
    ----------
    X_factory : callable(rng) -> (X, labels, centers or None)
        Draws (synthetic) or returns (real) the data of one trial.
    local_steps : list
        Values of ``L``: ints, ``"T/2"``, or ``None`` for no aggregation.
    keys : dict
        Columns identifying the setting (data set, SNR, ...), copied to every row.

    Returns
    -------
    DataFrame
        Tidy: one row per trial, ``L``, iteration and metric (``misclustering``,
        ``objective``, ``global_objective``, ``mean_machine_misclustering``), plus the run's
        communication as metrics
        at the final iteration (``rounds``, ``floats_up``, ``floats_down``).
    """
    keys = dict(keys or {})
    steps = _parse_local_steps(local_steps, n_iter)
    frames = []
    for trial in tqdm(range(trials), desc=f"LocalKMeans {keys}", disable=not progress,
                      mininterval=2.0):
        rng = np.random.default_rng(run_seed(base_seed, trial))
        X, labels, centers = X_factory(rng)
        machines = iid_partition(len(X), n_machines, random_state=rng)
        start = _initial(init, X, labels, centers, perturbation, rng)
        seed = int(rng.integers(2**31 - 1))
        for L in steps:
            # every L starts from the same initialization and partition (same seed)
            model = LocalKMeans(labels.max() + 1, L, n_iter=n_iter, init=start,
                                random_state=seed).fit(X, machines, y_true=labels)
            h = model.history_
            base = {**keys, "init": init, "n_machines": n_machines, "n_iter": n_iter,
                    "local_steps": local_steps_label(L), "trial": trial}
            for metric, values in (("misclustering", h["misclustering"]),
                                   ("objective", h["objective"]),
                                   ("global_objective", h["global_objective"]),
                                   ("mean_machine_misclustering",
                                    np.nanmean(h["machine_misclustering"], axis=1))):
                frames.append(pd.DataFrame({**base, "iteration": h["iteration"],
                                            "metric": metric, "value": values}))
            comm = model.communication_
            frames.append(pd.DataFrame({**base, "iteration": n_iter,
                                        "metric": ["rounds", "floats_up", "floats_down"],
                                        "value": [comm["rounds"], comm["floats_up"],
                                                  comm["floats_down"]]}))
    return pd.concat(frames, ignore_index=True)


def final_error_sweep(*, parameter: str, values, make_setting, local_steps, n_iter: int,
                      trials: int, base_seed: int, init: str = "k-means++",
                      perturbation: float = 0.3, progress: bool = True) -> pd.DataFrame:
    """Figure 4: misclustering after ``T`` iterations as one parameter varies.

    ``make_setting(value)`` returns ``(X_factory, n_machines, keys)`` for one value of the swept
    parameter; the table keeps only the final iteration.
    """
    frames = []
    for i, value in enumerate(values):
        factory, n_machines, keys = make_setting(value)
        table = trajectory_runs(X_factory=factory, local_steps=local_steps, n_iter=n_iter,
                                n_machines=n_machines, trials=trials,
                                base_seed=run_seed(base_seed, i), init=init,
                                perturbation=perturbation,
                                keys={"sweep": parameter, parameter: value, **keys},
                                progress=progress)
        frames.append(table[table["iteration"] == n_iter])
    return pd.concat(frames, ignore_index=True)

"""k-FED on Gaussian mixtures: Table 1 and Figure 1 of Dennis, Li & Smith (ICML 2021). A run
(Sec. 4.1, with the numbers the paper leaves out chosen in the config) samples ``k`` spherical
Gaussians in ``R^d`` in groups of ``k'`` components (:mod:`fedclust.data.gaussian_mixture`),
deals every group's samples over ``m0`` devices of its own
(:func:`fedclust.partitions.structured_partition`), runs k-FED with ``k`` and ``k'`` and scores
the accuracy of its induced clustering against the planted one (:func:`mixture_trial`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...algorithms import KFed
from ...data.gaussian_mixture import make_separated_mixture
from ...io import tidy
from ...metrics import clustering_accuracy, kmeans_cost
from ...partitions import structured_partition
from ...progress import progress
from ...seeds import seed_for

__all__ = ["device_clusters_for", "mixture_federation", "mixture_run_seed",
           "mixture_trial", "run_mixture_grid", "run_setting",
           "MIXTURE_ID_COLUMNS"]

MIXTURE_ID_COLUMNS = ("experiment", "n_features", "n_clusters", "device_clusters",
                      "devices_per_cluster", "separation", "samples_per_cluster", "run", "seed")


#: k-FED as printed where the estimator's defaults differ: Algorithm 2 clusters the set of
#: local centers, each counted once (the estimator weighs them by size), and the exchange is
#: one round (the estimator refines by Lloyd rounds): every k-FED experiment passes it,
#: whatever its server starts and rounds.
PRINTED_KFED = {"server_weighting": "uniform", "refine_max_iter": 0}


def device_clusters_for(n_clusters: int, rule) -> int:
    """``k'`` from a config value: an int, or ``"sqrt"`` for ``round(sqrt(k))`` (the paper's).
    """
    if rule == "sqrt":
        return max(1, int(round(math.sqrt(n_clusters))))
    if isinstance(rule, int) and not isinstance(rule, bool) and 1 <= rule <= n_clusters:
        return rule
    raise ValueError(f"device_clusters must be 'sqrt' or an int in [1, {n_clusters}]; got {rule!r}")


def mixture_federation(*, n_features: int, n_clusters: int, device_clusters: int,
                       devices_per_cluster: int, separation: float, samples_per_cluster: int,
                       seed: int, inactive_to_active: float = 0.1):
    """The mixture and the device of every sample of one run of :func:`mixture_trial`
    (``seed`` the run's): what any implementation of k-FED is given in that run. Active pairs
    are at separation ``c`` (``separation``), inactive pairs only as far as the inactive
    requirement, whose constant is ``C_in = inactive_to_active * c``: with the config's 0.1 it
    is Theorem 3.1's 10 at Table 1's ``c = 100``; for Fig 1's other ``c`` it scales with ``c``
    (our choice: the paper does not say how Fig 1 places the inactive pairs).

    Returns
    -------
    mix : SeparatedMixture
        The sample (``X``, planted ``labels``, ``groups``, ``centers``).
    devices : ndarray of shape (n_samples,)
        The structured partition.
    """
    mix = make_separated_mixture(n_clusters, n_features, separation,
                                 samples_per_cluster=samples_per_cluster,
                                 device_clusters=device_clusters,
                                 devices_per_cluster=devices_per_cluster,
                                 inactive_constant=inactive_to_active * separation,
                                 random_state=seed_for(seed, "mixture"))
    devices = structured_partition(mix.labels, device_clusters, devices_per_cluster,
                                   random_state=seed_for(seed, "partition"), groups=mix.groups)
    return mix, devices


def mixture_trial(*, n_features: int, n_clusters: int, device_clusters: int,
                  devices_per_cluster: int, separation: float, samples_per_cluster: int,
                  seed: int, server_lloyd_rounds=1, server_starts=1,
                  inactive_to_active: float = 0.1) -> dict:
    """One run: sample a mixture, partition it, run k-FED, score it.

    Returns
    -------
    dict of metric name -> value
        ``accuracy`` (of the induced clustering), ``kmeans_cost`` (of the induced clustering
        with k-FED's centers), ``cost_ratio`` (that cost over the planted clustering's),
        ``n_devices``, the communication (:data:`fedclust.communication.LEDGER_COLUMNS`)
        and the sample's measured
        ``separation_measured`` (closest active pair) and ``inactive_measured`` (closest
        inactive pair, in units of ``sqrt(m0) lambda``).
    """
    mix, devices = mixture_federation(
        n_features=n_features, n_clusters=n_clusters, device_clusters=device_clusters,
        devices_per_cluster=devices_per_cluster, separation=separation,
        samples_per_cluster=samples_per_cluster, seed=seed,
        inactive_to_active=inactive_to_active)
    model = KFed(n_clusters, device_clusters, server_lloyd_rounds=server_lloyd_rounds,
                 server_starts=server_starts, **PRINTED_KFED,
                 random_state=seed_for(seed, "k-FED")).fit(mix.X, devices=devices)
    cost = kmeans_cost(mix.X, model.cluster_centers_, model.labels_)
    planted = kmeans_cost(mix.X, mix.centers, mix.labels)
    comm = model.communication_
    return {
        "accuracy": clustering_accuracy(mix.labels, model.labels_),
        "kmeans_cost": cost,
        "cost_ratio": cost / planted,
        "n_devices": len(np.unique(devices)),
        **comm.ledger(),
        "separation_measured": mix.separation,
        "inactive_measured": mix.inactive_separation,
    }


def mixture_run_seed(base_seed: int, experiment: str, n_features: int, n_clusters: int,
                     separation: float, run: int) -> int:
    """The seed of run ``run`` of one ``(d, k, c)`` setting of ``experiment`` (``"table1"``
    or ``"fig1"``): a setting's numbers do not depend on which other settings run."""
    return seed_for(base_seed, "kfed", experiment, f"d={n_features}", f"k={n_clusters}",
                    f"c={float(separation)}", f"run={run}")


def run_mixture_grid(*, experiment: str, n_features: int, n_clusters: int, device_clusters,
                     devices_per_cluster: int, separations, samples_per_cluster: int, runs: int,
                     base_seed: int, server_lloyd_rounds, inactive_to_active: float,
                     server_starts=1, show_progress: bool = True) -> pd.DataFrame:
    """All runs of one ``(d, k)`` setting over a list of separations, as a tidy table.

    Run ``j`` at separation ``c`` has the seed named ``("kfed", experiment, d, k, c, j)``
    (:func:`fedclust.seeds.seed_for`): a setting's numbers do not depend on which other
    settings run; the mixture, the partition and k-FED draw from seeds derived from it.
    """
    k_prime = device_clusters_for(n_clusters, device_clusters)
    separations = [float(c) for c in separations]
    records = []
    jobs = [(c, j) for c in separations for j in range(runs)]
    for c, j in progress(jobs, desc=f"{experiment} d={n_features} k={n_clusters}",
                         disable=not show_progress):
        seed = mixture_run_seed(base_seed, experiment, n_features, n_clusters, c, j)
        metrics = mixture_trial(n_features=n_features, n_clusters=n_clusters,
                                device_clusters=k_prime, devices_per_cluster=devices_per_cluster,
                                separation=c, samples_per_cluster=samples_per_cluster, seed=seed,
                                server_lloyd_rounds=server_lloyd_rounds,
                                server_starts=server_starts,
                                inactive_to_active=inactive_to_active)
        records.append({"experiment": experiment, "n_features": n_features,
                        "n_clusters": n_clusters, "device_clusters": k_prime,
                        "devices_per_cluster": devices_per_cluster, "separation": c,
                        "samples_per_cluster": samples_per_cluster, "run": j, "seed": seed,
                        **metrics})
    return tidy(records, MIXTURE_ID_COLUMNS)


def run_setting(experiment: str, settings: dict, *, n_features: int, n_clusters: int,
                base_seed: int, show_progress: bool = True) -> pd.DataFrame:
    """All runs of one ``(d, k)`` setting of Table 1 (``experiment="table1"``, its one ``c``)
    or Figure 1 (``"fig1"``, its grid of ``c``), from the experiment's config section."""
    if experiment == "table1":
        separations = [settings["separation"]]
    elif experiment == "fig1":
        separations = settings["separations"]
    else:
        raise ValueError(f"experiment must be 'table1' or 'fig1'; got {experiment!r}")
    return run_mixture_grid(
        experiment=experiment, n_features=n_features, n_clusters=n_clusters,
        device_clusters=settings["device_clusters"],
        devices_per_cluster=settings["devices_per_cluster"], separations=separations,
        samples_per_cluster=settings["samples_per_cluster"], runs=settings["runs"],
        base_seed=base_seed, server_lloyd_rounds=settings["server_lloyd_rounds"],
        server_starts=settings["server_starts"],
        inactive_to_active=settings["inactive_to_active"], show_progress=show_progress)

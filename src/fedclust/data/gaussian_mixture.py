"""Gaussian mixtures in k-FED's Table 1 setup (Dennis, Li & Smith, ICML 2021, Sec. 4.1).

The ``k`` components are split into groups of ``k'``, each group dealt over ``m0`` devices of
its own, and the sample is built so that Theorem 3.1's active-pair and inactive-pair
separations hold exactly, measured on the sample itself (:func:`fedclust.metrics.separation`).
The requirements and the construction (ours: the paper prints no generator):
``docs/data.md`` (k-FED's Gaussian mixtures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_int, check_random_state, check_real
from ..metrics import center_gaps, spectral_norm

__all__ = ["SeparatedMixture", "make_separated_mixture", "mixture_groups"]


@dataclass
class SeparatedMixture:
    """A sample from :func:`make_separated_mixture`."""

    X: np.ndarray              # (n, d)
    labels: np.ndarray         # (n,) planted cluster of every row
    centers: np.ndarray        # (k, d) planted centers == empirical cluster means
    groups: np.ndarray         # (k,) group G_i of every cluster
    separation: float          # min c_rs over active pairs (== the requested c)
    inactive_separation: float  # min over inactive pairs of ||mu_r - mu_s|| / (sqrt(m0) lambda)
    residual_norm: float       # ||A - C||_2
    delta: float               # Delta_r (equal for every cluster)
    lam: float                 # lambda
    min_device_size: int       # n_min entering lambda


def mixture_groups(n_clusters: int, device_clusters: int) -> np.ndarray:
    """Group ``G_i`` of every component: ``k'`` consecutive components per group."""
    return np.arange(n_clusters) // device_clusters


def _pair_minimum(centers: np.ndarray, mask: np.ndarray) -> float:
    gaps = center_gaps(centers)
    return float(gaps[mask].min()) if mask.any() else np.inf


def _bisect(f, target: float, low: float = 0.0, high: float = 1.0) -> float:
    """The ``x >= low`` with ``f(x) = target`` for ``f`` increasing (``f(low) < target``)."""
    while f(high) < target:
        high *= 2.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if f(mid) < target else (low, mid)
    return high


def make_separated_mixture(n_clusters: int, n_features: int, separation: float, *,
                           samples_per_cluster: int, device_clusters: int,
                           devices_per_cluster: int, inactive_constant: float = 10.0,
                           noise_std: float = 1.0, random_state=None) -> SeparatedMixture:
    """Sample a mixture of ``k`` spherical Gaussians in k-FED's Table 1 setup (see the
    module docstring).

    Parameters
    ----------
    n_clusters : int
        ``k``.
    n_features : int
        ``d``.
    separation : float
        ``c``, the active separation constant: the closest active pair has ``c_rs = c``.
    samples_per_cluster : int
        ``n_r``, the same for every cluster (the paper's "poly(dk)").
    device_clusters : int
        ``k'``, the size of a group (the components a device sees).
    devices_per_cluster : int
        ``m0``, the devices a group's data are dealt over.
    inactive_constant : float, default=10
        ``C_in``: the closest inactive pair is at ``C_in sqrt(m0) lambda`` (10 in
        Theorem 3.1).
    noise_std : float
        ``sigma``; it sets the units, the geometry depends on ``c`` and ``C_in`` only.
    random_state : int, Generator or None

    Returns
    -------
    SeparatedMixture
        Rows are grouped by cluster (cluster 0 first).

    Examples
    --------
    >>> from fedclust.data import make_separated_mixture
    >>> from fedclust.metrics import separation
    >>> mix = make_separated_mixture(16, 20, 5.0, samples_per_cluster=50, device_clusters=4,
    ...                              devices_per_cluster=5, random_state=0)
    >>> sep = separation(mix.X, mix.labels, device_clusters=4, devices_per_cluster=5)
    >>> active = mix.groups[:, None] == mix.groups[None, :]
    >>> round(float(sep.c[active & (sep.c < float("inf"))].min()), 6)
    5.0
    """
    k = check_int(n_clusters, "n_clusters", low=2)
    d = check_int(n_features, "n_features", low=1)
    c = check_real(separation, "separation", low=0.0, low_inclusive=False)
    n_r = check_int(samples_per_cluster, "samples_per_cluster", low=2)
    k_prime = check_int(device_clusters, "device_clusters", low=1, high=k)
    m0 = check_int(devices_per_cluster, "devices_per_cluster", low=1, high=n_r)
    c_in = check_real(inactive_constant, "inactive_constant", low=0.0, low_inclusive=False)
    sigma = check_real(noise_std, "noise_std", low=0.0, low_inclusive=False)
    rng = check_random_state(random_state)

    labels = np.repeat(np.arange(k), n_r)
    groups = mixture_groups(k, k_prime)
    slots = np.arange(k) % k_prime
    slot_directions = rng.standard_normal((k_prime, d))
    offsets = rng.standard_normal((k, d))
    noise = sigma * rng.standard_normal((k, n_r, d))
    noise -= noise.mean(axis=1, keepdims=True)
    noise = noise.reshape(k * n_r, d)

    residual_norm = spectral_norm(noise)
    delta = k_prime * residual_norm / np.sqrt(n_r)
    # a device of the smallest group holds about n_r / m0 points of each of its clusters
    smallest_group = int(np.bincount(groups).min())
    min_device_size = smallest_group * (n_r // m0)
    lam = np.sqrt(k_prime) * residual_norm / np.sqrt(min_device_size)

    same_group = groups[:, None] == groups[None, :]
    off_diagonal = ~np.eye(k, dtype=bool)
    active, inactive = same_group & off_diagonal, ~same_group

    def centers_for(a, b):
        return a * slot_directions[slots] + b * offsets

    def min_active(a, b):  # c_rs of the closest active pair
        return _pair_minimum(centers_for(a, b), active) / (np.sqrt(m0) * 2.0 * delta)

    def min_inactive(a, b):  # in units of sqrt(m0) lambda
        return _pair_minimum(centers_for(a, b), inactive) / (np.sqrt(m0) * lam)

    # alternate: b meets the inactive bound for the current a, a the active one for that b
    def solve_b(a):
        return _bisect(lambda x: min_inactive(a, x), c_in) if inactive.any() else 0.0

    def solve_a(b):
        if not active.any() or min_active(0.0, b) >= c:
            return 0.0
        return _bisect(lambda x: min_active(x, b), c)

    a, b = 0.0, 1.0
    for _ in range(50):
        a_new = solve_a(solve_b(a))
        b_new = solve_b(a_new)
        converged = np.isclose(a_new, a, rtol=1e-10) and np.isclose(b_new, b, rtol=1e-10)
        a, b = a_new, b_new
        if converged:
            break
    centers = centers_for(a, b)
    X = centers[labels] + noise
    return SeparatedMixture(
        X=X, labels=labels, centers=centers, groups=groups,
        separation=float(min_active(a, b)), inactive_separation=float(min_inactive(a, b)),
        residual_norm=float(residual_norm), delta=float(delta), lam=float(lam),
        min_device_size=int(min_device_size))

"""Gaussian mixtures with a prescribed k-FED separation (the setting of k-FED's Table 1 and Fig 1).

The separation ``c`` of a sample is the one k-FED's analysis uses, measured on the sample
itself (see :func:`fedclust.metrics.separation`): with ``A`` the data and ``C`` its cluster means
row by row,

    Delta_r = sqrt(k') ||A - C||_2 / sqrt(n_r),
    c_rs = ||mu_r - mu_s|| / (m0 (Delta_r + Delta_s)),

and the sample has separation ``c = min_{r != s} c_rs``.

Construction. Center directions ``u_r`` are standard Gaussian vectors in ``R^d``; the noise ``E``
is i.i.d. ``N(0, sigma^2)`` and is centered within each cluster, so that the empirical cluster
means are exactly the planted centers ``mu_r = s u_r``. Then ``A - C = E`` does not depend on the
scale ``s``, and ``s`` is solved for in closed form so that the minimum ``c_rs`` equals ``c``
exactly. (Centering the noise per cluster removes ``k`` degrees of freedom out of ``n d`` and is
the only departure from a plain mixture sample.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_int, check_random_state, check_real
from ..metrics import spectral_norm

__all__ = ["SeparatedMixture", "make_separated_mixture"]


@dataclass
class SeparatedMixture:
    """A sample from :func:`make_separated_mixture`."""

    X: np.ndarray            # (n, d)
    labels: np.ndarray       # (n,) planted cluster of every row
    centers: np.ndarray      # (k, d) planted centers == empirical cluster means
    separation: float        # min_{r != s} c_rs of the sample (== the requested c)
    residual_norm: float     # ||A - C||_2
    scale: float             # s, the factor applied to the center directions


def make_separated_mixture(n_clusters: int, n_features: int, separation: float, *,
                           samples_per_cluster: int, device_clusters: int,
                           devices_per_cluster: int, noise_std: float = 1.0,
                           random_state=None) -> SeparatedMixture:
    """Sample a mixture of ``k`` spherical Gaussians whose k-FED separation is exactly ``c``.

    Parameters
    ----------
    n_clusters : int
        ``k``.
    n_features : int
        ``d``.
    separation : float
        ``c``, the target minimum pairwise separation ``c_rs`` of the sample.
    samples_per_cluster : int
        ``n_r``, the same for every cluster.
    device_clusters : int
        ``k'`` entering ``Delta_r``.
    devices_per_cluster : int
        ``m0`` entering ``c_rs``.
    noise_std : float
        ``sigma``; it sets the units, the geometry depends on ``c`` only.
    random_state : int, Generator or None

    Returns
    -------
    SeparatedMixture
        Rows are grouped by cluster (cluster 0 first).
    """
    k = check_int(n_clusters, "n_clusters", low=2)
    d = check_int(n_features, "n_features", low=1)
    c = check_real(separation, "separation", low=0.0, low_inclusive=False)
    n_r = check_int(samples_per_cluster, "samples_per_cluster", low=2)
    k_prime = check_int(device_clusters, "device_clusters", low=1)
    m0 = check_int(devices_per_cluster, "devices_per_cluster", low=1)
    sigma = check_real(noise_std, "noise_std", low=0.0, low_inclusive=False)
    rng = check_random_state(random_state)

    labels = np.repeat(np.arange(k), n_r)
    directions = rng.standard_normal((k, d))
    noise = sigma * rng.standard_normal((k, n_r, d))
    noise -= noise.mean(axis=1, keepdims=True)
    noise = noise.reshape(k * n_r, d)

    residual_norm = spectral_norm(noise)
    delta = np.sqrt(k_prime) * residual_norm / np.sqrt(n_r)   # equal for all clusters here
    gaps = np.linalg.norm(directions[:, None, :] - directions[None, :, :], axis=-1)
    r, s = np.triu_indices(k, k=1)
    unit_separation = (gaps[r, s] / (m0 * 2.0 * delta)).min()
    scale = c / unit_separation
    centers = scale * directions
    X = centers[labels] + noise
    return SeparatedMixture(X=X, labels=labels, centers=centers, separation=c,
                            residual_norm=residual_norm, scale=float(scale))

"""Lu & Zhou's signal-to-noise ratio of LocalKMeans' synthetic mixtures, and the noise and
separation that give one (App. B): what the experiments sample and what the captions state,
in a module of its own so that Snakemake renders the captions without importing the
estimators.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_real

__all__ = ["snr_of", "noise_std_for_snr", "separation_for_snr"]


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


def separation_for_snr(snr: float, *, n_clusters: int, n_features: int,
                       n_samples: int) -> float:
    """The ``Delta / sigma`` that gives signal-to-noise ratio ``snr`` (equal clusters)."""
    return snr / snr_of(1.0, 1.0, n_clusters=n_clusters, n_features=n_features,
                        n_samples=n_samples)

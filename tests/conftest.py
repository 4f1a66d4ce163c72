"""Shared fixtures: small data made in the tests, and where the offline mirror lives."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    """The offline data mirror: $FEDCLUST_DATA_MIRROR, else ../shared/data beside the repo."""
    candidate = Path(os.environ.get("FEDCLUST_DATA_MIRROR", REPO.parent / "shared" / "data"))
    return candidate if candidate.is_dir() else None


@pytest.fixture
def mirror() -> Path:
    """The offline mirror; missing data fails under CI and skips elsewhere."""
    path = shared_data_dir()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the offline data mirror at ../shared/data "
                        "(or FEDCLUST_DATA_MIRROR)")
        pytest.skip("offline data mirror not found")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def make_blobs(rng, n_clusters=4, n_features=5, per_cluster=30, spread=50.0):
    """Well-separated blobs: centers on scaled axes, unit noise. Returns X, labels, centers."""
    centers = spread * np.eye(n_clusters, n_features) if n_clusters <= n_features else \
        spread * rng.standard_normal((n_clusters, n_features))
    labels = np.repeat(np.arange(n_clusters), per_cluster)
    X = centers[labels] + rng.standard_normal((len(labels), n_features))
    return X, labels, centers

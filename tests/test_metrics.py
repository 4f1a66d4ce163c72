import itertools

import numpy as np
import pytest
from sklearn.cluster import KMeans

from fedclust.metrics import (
    clustering_accuracy,
    kmeans_cost,
    kmedian_cost,
    misclustering_rate,
    separation,
    spectral_norm,
)


def test_kmeans_cost_against_an_explicit_sum(rng):
    X = rng.standard_normal((120, 4))
    C = rng.standard_normal((5, 4))
    explicit = sum(min(float(np.sum((x - c) ** 2)) for c in C) for x in X)
    assert kmeans_cost(X, C) == pytest.approx(explicit, rel=1e-10)
    labels = rng.integers(0, 5, size=120)
    explicit_given = sum(float(np.sum((x - C[j]) ** 2)) for x, j in zip(X, labels, strict=True))
    assert kmeans_cost(X, C, labels) == pytest.approx(explicit_given, rel=1e-10)


def test_kmeans_cost_equals_sklearn_inertia(rng):
    X = rng.standard_normal((200, 3))
    km = KMeans(6, n_init=1, random_state=0).fit(X)
    assert kmeans_cost(X, km.cluster_centers_) == pytest.approx(km.inertia_, rel=1e-6)


def test_kmeans_cost_rejects_wrong_shapes(rng):
    with pytest.raises(ValueError, match=r"centers must have shape \(k, 3\)"):
        kmeans_cost(rng.standard_normal((5, 3)), np.zeros((2, 4)))


def test_kmedian_cost_against_a_direct_computation(rng):
    X = rng.standard_normal((120, 4))
    C = rng.standard_normal((5, 4))
    w = rng.uniform(0.1, 3.0, size=120)
    distances = np.sqrt(((X[:, None, :] - C[None]) ** 2).sum(-1))  # (n, k), no kernel
    assert kmedian_cost(X, C) == pytest.approx(distances.min(1).sum(), rel=1e-10)
    assert kmedian_cost(X, C, sample_weight=w) == pytest.approx(w @ distances.min(1), rel=1e-10)
    labels = rng.integers(0, 5, size=120)
    given = distances[np.arange(120), labels]
    assert kmedian_cost(X, C, labels) == pytest.approx(given.sum(), rel=1e-10)
    assert kmedian_cost(X, C, labels, w) == pytest.approx(w @ given, rel=1e-10)
    # the nearest center in distance is the nearest in squared distance: not the k-means cost
    assert kmedian_cost(X, C) != pytest.approx(kmeans_cost(X, C))


def test_kmedian_cost_validates_like_kmeans_cost(rng):
    X = rng.standard_normal((5, 3))
    with pytest.raises(ValueError, match=r"centers must have shape \(k, 3\)"):
        kmedian_cost(X, np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"labels must have shape \(5,\)"):
        kmedian_cost(X, np.zeros((2, 3)), labels=np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\)"):
        kmedian_cost(X, np.zeros((2, 3)), labels=np.array([0, 1, 2, 0, 0]))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        kmedian_cost(bad, np.zeros((2, 3)))


def brute_force_accuracy(truth, pred):
    """Best agreement over every bijection of the predicted labels (small k only)."""
    t_vals, p_vals = np.unique(truth), np.unique(pred)
    best = 0
    for perm in itertools.permutations(t_vals, len(p_vals)):
        mapping = dict(zip(p_vals, perm, strict=True))
        best = max(best, np.sum(np.array([mapping[p] for p in pred]) == truth))
    return best / len(truth)


def test_accuracy_is_invariant_to_renaming_and_matches_brute_force(rng):
    truth = rng.integers(0, 4, size=200)
    assert clustering_accuracy(truth, (truth + 1) % 4) == 1.0
    noisy = truth.copy()
    flip = rng.random(200) < 0.3
    noisy[flip] = rng.integers(0, 4, size=flip.sum())
    assert clustering_accuracy(truth, noisy) == pytest.approx(brute_force_accuracy(truth, noisy))
    assert misclustering_rate(truth, noisy) == pytest.approx(1 - brute_force_accuracy(truth, noisy))


def test_accuracy_with_different_numbers_of_clusters():
    truth = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    merged = np.array([5, 5, 5, 5, 5, 5, 9, 9])   # clusters 0 and 1 merged
    assert clustering_accuracy(truth, merged) == pytest.approx(5 / 8)
    split = np.array([0, 1, 2, 3, 4, 5, 6, 7])     # every point alone
    assert clustering_accuracy(truth, split) == pytest.approx(3 / 8)


@pytest.mark.parametrize("shape", [(300, 20), (15, 40)])
def test_spectral_norm_equals_largest_singular_value(rng, shape):
    M = rng.standard_normal(shape)
    assert spectral_norm(M, chunk_rows=7) == pytest.approx(np.linalg.norm(M, 2), rel=1e-10)


def test_separation_against_a_direct_computation(rng):
    labels = np.repeat([0, 1, 2], [40, 60, 25])
    X = rng.standard_normal((125, 6)) + 4 * np.eye(3, 6)[labels]
    sep = separation(X, labels, device_clusters=2, devices_per_cluster=3)
    means = np.stack([X[labels == r].mean(axis=0) for r in range(3)])
    residual = np.linalg.norm(X - means[labels], 2)
    # reconstructed from the proofs: Delta_r = k' ||A - C|| / sqrt(n_r), c_rs with sqrt(m0)
    delta = 2 * residual / np.sqrt([40, 60, 25])
    for r, s in [(0, 1), (0, 2), (1, 2)]:
        expected = np.linalg.norm(means[r] - means[s]) / (np.sqrt(3) * (delta[r] + delta[s]))
        assert sep.c[r, s] == pytest.approx(expected, rel=1e-10)
        assert sep.c[s, r] == pytest.approx(expected, rel=1e-10)
    assert sep.minimum == pytest.approx(min(sep.c[0, 1], sep.c[0, 2], sep.c[1, 2]))
    np.testing.assert_allclose(sep.delta, delta)
    assert np.all(np.isinf(np.diag(sep.c)))
    # the inactive requirement: ||mu_r - mu_s|| / (10 sqrt(m0) lambda), lambda with n_min
    lam = np.sqrt(2) * residual / np.sqrt(30)
    inactive = sep.inactive(min_device_size=30)
    assert inactive[0, 1] == pytest.approx(np.linalg.norm(means[0] - means[1]) /
                                           (10 * np.sqrt(3) * lam))


def test_separation_rejects_empty_clusters(rng):
    with pytest.raises(ValueError, match=r"clusters \[1\] are empty"):
        separation(rng.standard_normal((6, 2)), np.array([0, 0, 0, 2, 2, 2]),
                   device_clusters=1, devices_per_cluster=1)

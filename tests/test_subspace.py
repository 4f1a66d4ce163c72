import numpy as np
import pytest

from fedclust.federation import Federation
from fedclust.subspace import top_subspaces_by_device


def projector(basis):
    return basis @ basis.T


def reference_subspace(A, rank, w=None):
    scaled = A if w is None else A * np.sqrt(w)[:, None]
    _, _, vt = np.linalg.svd(scaled, full_matrices=False)
    return vt[:rank].T


def low_rank_device(rng, n, d, rank):
    """Rows near a random rank-``rank`` subspace with a clear spectral gap."""
    basis = np.linalg.qr(rng.standard_normal((d, rank)))[0]
    scales = np.linspace(20, 10, rank)
    return (rng.standard_normal((n, rank)) * scales) @ basis.T + 0.1 * rng.standard_normal((n, d))


@pytest.mark.parametrize("n_rows", [200, 30])  # the d x d Gram and the n x n (dual) Gram
@pytest.mark.parametrize("d", [20, 90])        # exact eigh and subspace iteration
def test_matches_numpy_svd_on_every_device(rng, n_rows, d):
    ranks = np.array([3, 1, 5, 2])
    blocks = [low_rank_device(rng, n_rows, d, r) for r in ranks]
    X = np.vstack(blocks)
    fed = Federation.from_devices(X, np.repeat(np.arange(4), n_rows))
    sub = top_subspaces_by_device(fed, ranks, random_state=0)
    assert sub.bases.shape == (4, d, 5) and sub.projected.shape == (len(X), 5)
    for z, (A, r) in enumerate(zip(blocks, ranks, strict=True)):
        basis = sub.bases[z, :, :r]
        np.testing.assert_allclose(basis.T @ basis, np.eye(r), atol=1e-10)
        assert not sub.bases[z, :, r:].any()  # padding columns are zero
        np.testing.assert_allclose(projector(basis), projector(reference_subspace(A, r)),
                                   atol=1e-6)
        rows = slice(fed.offsets[z], fed.offsets[z + 1])
        np.testing.assert_allclose(sub.projected[rows, :r], A @ basis, atol=1e-9)


def test_weighted_subspace_is_the_subspace_of_scaled_rows(rng):
    A = low_rank_device(rng, 80, 12, 2) + rng.standard_normal((80, 12))
    w = rng.random(80) * 3
    fed = Federation.from_devices(A, np.zeros(80, dtype=int), sample_weight=w)
    sub = top_subspaces_by_device(fed, 2, weights=fed.weights, random_state=0)
    np.testing.assert_allclose(projector(sub.bases[0]), projector(reference_subspace(A, 2, w)),
                               atol=1e-8)


def test_rank_at_least_d_is_the_identity_and_rank_zero_skips(rng):
    X = rng.standard_normal((40, 3))
    fed = Federation.from_devices(X, np.repeat([0, 1], 20))
    sub = top_subspaces_by_device(fed, np.array([3, 0]), random_state=0)
    np.testing.assert_array_equal(sub.bases[0], np.eye(3))
    np.testing.assert_array_equal(sub.projected[:20], X[:20])
    assert not sub.bases[1].any() and not sub.projected[20:].any()

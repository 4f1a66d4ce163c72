import numba
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial.distance import cdist
from sklearn.cluster import KMeans

import fedclust.lloyd as kernel
from fedclust.federation import Federation
from fedclust.lloyd import (
    assign,
    assign_by_device,
    lloyd,
    lloyd_by_device,
    lloyd_step_by_device,
    update_centers,
    update_medians,
)

from .conftest import make_blobs


def brute_force_assign(X, C, mask=None):
    D = cdist(X, C, "sqeuclidean")
    if mask is not None:
        D[:, ~mask] = np.inf
    return D.argmin(axis=1), D.min(axis=1)


def test_assign_matches_brute_force(rng):
    X = rng.standard_normal((500, 7))
    C = rng.standard_normal((9, 7))
    labels, sq = assign(X, C)
    ref_labels, ref_sq = brute_force_assign(X, C)
    assert np.array_equal(labels, ref_labels)
    np.testing.assert_allclose(sq, ref_sq, rtol=1e-9, atol=1e-9)


def test_assign_blocks_and_mask(rng, monkeypatch):
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", 3)  # many tiny blocks, dealt to several tasks
    X = rng.standard_normal((101, 3))
    C = rng.standard_normal((5, 3))
    mask = np.array([True, False, True, False, True])
    labels, sq = assign(X, C, center_mask=mask)
    ref_labels, ref_sq = brute_force_assign(X, C, mask)
    assert np.array_equal(labels, ref_labels)
    assert set(np.unique(labels)) <= {0, 2, 4}
    np.testing.assert_allclose(sq, ref_sq, atol=1e-9)


@pytest.mark.parametrize("block_rows", [256, 2])
def test_assign_by_device_matches_per_device_brute_force(rng, monkeypatch, block_rows):
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", block_rows)
    sizes = [5, 1, 12, 12, 3, 40]
    devices = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.standard_normal((sum(sizes), 4))
    fed = Federation.from_devices(X, devices)
    C = rng.standard_normal((len(sizes), 3, 4))
    mask = rng.random((len(sizes), 3)) < 0.7
    mask[:, 0] = True
    labels, sq = assign_by_device(fed, C, center_mask=mask)
    for z in range(len(sizes)):
        rows = slice(fed.offsets[z], fed.offsets[z + 1])
        ref_labels, ref_sq = brute_force_assign(fed.device_data(z), C[z], mask[z])
        assert np.array_equal(labels[rows], ref_labels)
        np.testing.assert_allclose(sq[rows], ref_sq, atol=1e-9)


def test_lloyd_matches_sklearn_from_the_same_init(rng):
    X = np.vstack([rng.normal(m, 1.0, size=(80, 3)) for m in (0, 4, 8, 12)])
    init = X[rng.choice(len(X), 4, replace=False)]
    ours = lloyd(X, init, max_iter=300)
    ref = KMeans(4, init=init, n_init=1, max_iter=300, tol=0.0, algorithm="lloyd").fit(X)
    assert ours.converged
    assert np.array_equal(ours.labels, ref.labels_)
    np.testing.assert_allclose(ours.centers, ref.cluster_centers_, atol=1e-10)
    np.testing.assert_allclose(ours.inertia, ref.inertia_, rtol=1e-10)


def test_one_lloyd_round_is_one_assignment_and_one_mean(rng):
    X = rng.standard_normal((60, 2))
    init = X[:3].copy()
    result = lloyd(X, init, max_iter=1)
    first = brute_force_assign(X, init)[0]
    expected = np.stack([X[first == j].mean(axis=0) for j in range(3)])
    np.testing.assert_allclose(result.centers, expected)
    assert result.n_iter == 1
    assert np.array_equal(result.labels, brute_force_assign(X, expected)[0])


def test_weighted_lloyd_equals_lloyd_on_repeated_rows(rng):
    X = rng.standard_normal((40, 3))
    w = rng.integers(1, 4, size=40)
    init = X[:4].copy()
    weighted = lloyd(X, init, weights=w.astype(float))
    repeated = lloyd(np.repeat(X, w, axis=0), init)
    np.testing.assert_allclose(weighted.centers, repeated.centers, atol=1e-10)
    np.testing.assert_allclose(weighted.cluster_weights, np.bincount(
        repeated.labels, minlength=4))


def test_empty_cluster_keeps_its_center():
    X = np.array([[0.0], [0.1], [10.0], [10.1]])
    previous = np.array([[0.0], [10.0], [1000.0]])
    centers, totals = update_centers(X, np.array([0, 0, 1, 1]), previous)
    np.testing.assert_allclose(centers[:, 0], [0.05, 10.05, 1000.0])
    assert totals.tolist() == [2, 2, 0]


@pytest.mark.parametrize("block_rows", [256, 4])
def test_lloyd_by_device_equals_independent_runs(rng, monkeypatch, block_rows):
    # 4-row blocks split the large devices over several tasks (their sums then meet in private
    # partials); 256-row blocks keep every device inside one task
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", block_rows)
    sizes = [30, 7, 55, 30]
    devices = np.repeat(np.arange(4), sizes)
    X = rng.standard_normal((sum(sizes), 3)) + 3 * devices[:, None]
    fed = Federation.from_devices(X, devices)
    init = np.stack([fed.device_data(z)[:3] for z in range(4)])
    joint = lloyd_by_device(fed, init)
    assert joint.converged
    for z in range(4):
        alone = lloyd(fed.device_data(z), init[z])
        rows = slice(fed.offsets[z], fed.offsets[z + 1])
        np.testing.assert_allclose(joint.centers[z], alone.centers, atol=1e-10)
        assert np.array_equal(joint.labels[rows], alone.labels)
        assert joint.counts[z].tolist() == np.bincount(alone.labels, minlength=3).tolist()
    assert joint.n_iter >= max(lloyd(fed.device_data(z), init[z]).n_iter for z in range(4))


def test_weighted_lloyd_by_device_equals_repeated_rows(rng):
    devices = np.repeat(np.arange(3), 20)
    X = rng.standard_normal((60, 2)) + 4 * devices[:, None]
    w = rng.integers(1, 4, size=60)
    weighted_fed = Federation.from_devices(X, devices, sample_weight=w)
    repeated_fed = Federation.from_devices(np.repeat(X, w, axis=0), np.repeat(devices, w))
    init = np.stack([weighted_fed.device_data(z)[:2] for z in range(3)])
    weighted = lloyd_by_device(weighted_fed, init)
    repeated = lloyd_by_device(repeated_fed, init)
    np.testing.assert_allclose(weighted.centers, repeated.centers, atol=1e-10)
    np.testing.assert_allclose(weighted.totals, repeated.counts)


def test_negative_weights_policy():
    """Negative weights count in the cost and the means; a cluster of non-positive total
    weight keeps its center (its weighted cost has no minimizer)."""
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    w = np.array([2.0, -0.5, 1.0, 1.0, -1.0])
    labels = np.array([0, 0, 0, 1, 1])
    previous = np.array([[5.0], [7.0]])
    centers, totals = update_centers(X, labels, previous, w)
    # cluster 0: (2*0 - 0.5*1 + 1*2) / 2.5; cluster 1: total weight 0, kept
    np.testing.assert_allclose(centers[:, 0], [1.5 / 2.5, 7.0])
    np.testing.assert_allclose(totals, [2.5, 0.0])
    result = lloyd(X, np.array([[0.0], [10.0]]), weights=w)
    expected = sum(wi * (xi - result.centers[li, 0]) ** 2
                   for xi, wi, li in zip(X[:, 0], w, result.labels, strict=True))
    assert result.inertia == pytest.approx(expected)


def test_lloyd_reports_every_iteration(rng):
    X = rng.standard_normal((50, 2))
    seen = []
    result = lloyd(X, X[:3], on_iteration=lambda t, c, labels, sq: seen.append((t, sq.sum())))
    assert [t for t, _ in seen] == list(range(result.n_iter + 1))
    assert seen[-1][1] == pytest.approx(result.inertia)


@pytest.mark.parametrize("block_rows", [256, 5])
def test_weighted_lloyd_sums_match_an_independent_computation(rng, monkeypatch, block_rows):
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", block_rows)
    X = rng.standard_normal((203, 6))
    w = rng.random(203)
    init = X[:5].copy()
    result = lloyd(X, init, weights=w, max_iter=1)
    first = brute_force_assign(X, init)[0]
    expected = np.stack([np.average(X[first == j], axis=0, weights=w[first == j])
                         for j in range(5)])
    np.testing.assert_allclose(result.centers, expected, rtol=1e-12)
    labels = brute_force_assign(X, expected)[0]
    np.testing.assert_allclose(result.cluster_weights, np.bincount(labels, w, minlength=5))


def test_segment_sums_match_np_add_at(rng):
    X = rng.standard_normal((1000, 4))
    segments = rng.integers(0, 37, size=1000)
    w = rng.standard_normal(1000)
    sums, totals = kernel.segment_sums(X, segments, 40, w)
    expected = np.zeros((40, 4))
    np.add.at(expected, segments, w[:, None] * X)
    np.testing.assert_allclose(sums, expected, atol=1e-12)
    np.testing.assert_allclose(totals, np.bincount(segments, w, minlength=40), atol=1e-12)
    assert sums[37:].sum() == 0.0


@pytest.mark.parametrize("k", [6, 40])  # direct loops, then one BLAS GEMM per block
def test_float32_data_stays_float32_and_agrees_with_float64(rng, k):
    assert (k <= kernel._DIRECT_MAX_K) == (k == 6)
    centers = rng.standard_normal((k, 20)) * 10
    X = (centers[rng.integers(0, k, size=2000)] + rng.standard_normal((2000, 20)))
    result32 = lloyd(X.astype(np.float32), centers)
    result64 = lloyd(X, centers)
    assert result32.centers.dtype == np.float32 and result32.sq_distances.dtype == np.float32
    assert np.array_equal(result32.labels, result64.labels)
    np.testing.assert_allclose(result32.centers, result64.centers, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(result32.inertia, result64.inertia, rtol=1e-5)


def test_sq_distances_to_given_centers(rng):
    X = rng.standard_normal((300, 5))
    C = rng.standard_normal((4, 5))
    labels = rng.integers(0, 4, size=300)
    np.testing.assert_allclose(kernel.sq_distances_to(X, C, labels),
                               ((X - C[labels]) ** 2).sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("weighted, dtype", [(False, np.float64), (True, np.float64),
                                             (False, np.float32)])
@pytest.mark.parametrize("direct", [True, False])  # few centers: loops; else one GEMM per block
def test_device_major_lloyd_equals_lock_step(rng, monkeypatch, weighted, dtype, direct):
    # many small devices run device by device; forcing the other route must change nothing
    sizes = rng.integers(1, 40, size=40)
    devices = np.repeat(np.arange(40), sizes)
    X = (rng.standard_normal((sizes.sum(), 5)) + 2 * (devices % 3)[:, None]).astype(dtype)
    w = rng.random(sizes.sum()) + 0.1 if weighted else None
    fed = Federation.from_devices(X, devices, sample_weight=w)
    init = np.stack([fed.X[fed.offsets[z] + np.arange(3) % sizes[z]] for z in range(40)])
    mask = np.arange(3)[None, :] < np.minimum(sizes, 3)[:, None]
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", 8)
    monkeypatch.setattr(kernel, "_DIRECT_MAX_K", 16 if direct else 2)
    monkeypatch.setattr(kernel, "_DEVICES_PER_THREAD", 1)  # up to 16 threads: still device-major
    assert kernel._fits_device_major(fed, fed.X)
    device_major = lloyd_by_device(fed, init, center_mask=mask, max_iter=50)
    monkeypatch.setattr(kernel, "_fits_device_major", lambda *args: False)
    lock_step = lloyd_by_device(fed, init, center_mask=mask, max_iter=50)
    np.testing.assert_allclose(device_major.centers, lock_step.centers, atol=1e-12)
    assert np.array_equal(device_major.labels, lock_step.labels)
    np.testing.assert_allclose(device_major.sq_distances, lock_step.sq_distances, atol=1e-10)
    assert np.array_equal(device_major.counts, lock_step.counts)
    assert (device_major.n_iter, device_major.converged) == (lock_step.n_iter, lock_step.converged)
    if weighted:
        np.testing.assert_allclose(device_major.totals, lock_step.totals)
    one_round = lloyd_by_device(fed, init, center_mask=mask, max_iter=1)
    monkeypatch.undo()
    assert kernel._fits_device_major(fed, fed.X) or numba.get_num_threads() > 2
    also_one_round = lloyd_by_device(fed, init, center_mask=mask, max_iter=1)
    np.testing.assert_allclose(also_one_round.centers, one_round.centers, atol=1e-12)
    assert also_one_round.n_iter == one_round.n_iter == 1


@pytest.mark.parametrize("weighted", [False, True])
def test_lloyd_step_by_device_is_assignment_then_update(rng, monkeypatch, weighted):
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", 4)  # devices split over tasks: private partials
    sizes = [9, 30, 2, 17]
    devices = np.repeat(np.arange(4), sizes)
    X = rng.standard_normal((sum(sizes), 3))
    w = rng.random(len(X)) + 0.5 if weighted else None
    fed = Federation.from_devices(X, devices, sample_weight=w)
    centers = rng.standard_normal((4, 3, 3))
    labels, sq, next_centers, totals = lloyd_step_by_device(fed, centers, weights=fed.weights)
    expected_labels, expected_sq = assign_by_device(fed, centers)
    assert np.array_equal(labels, expected_labels)
    np.testing.assert_allclose(sq, expected_sq)
    expected_centers, expected_totals = update_centers(
        fed.X, fed.device_of_row * 3 + labels, centers, fed.weights)
    np.testing.assert_allclose(next_centers, expected_centers, atol=1e-12)
    np.testing.assert_allclose(totals, expected_totals)
    empty = totals == 0  # an empty cluster keeps its center
    np.testing.assert_array_equal(next_centers[empty], centers[empty])


def stepwise_epochs(steps, centers, n_epochs, rate):
    """SegmentSteps.epochs as step() and numpy's update, epoch by epoch."""
    own = np.array(centers, dtype=np.float64)
    sizes = np.zeros(own.shape[:2])
    for _ in range(n_epochs):
        _, _, means, sizes = steps.step(own)
        share = np.divide(sizes, sizes, out=np.zeros_like(sizes), where=sizes > 0)
        own = own + (rate * share)[..., None] * (means - own)
    return sizes, own


@pytest.mark.parametrize("weighted, dtype", [(False, np.float64), (True, np.float64),
                                             (False, np.float32)])
@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("sizes, private", [([10, 0, 10, 3, 10, 9, 10, 8, 10, 10, 7, 10], False),
                                            ([300, 2, 9], True)])  # one segment in two tasks
def test_segment_epochs_equal_step_then_update_bit_for_bit(rng, monkeypatch, request, weighted,
                                                           dtype, direct, sizes, private):
    monkeypatch.setattr(kernel, "_DIRECT_MAX_K", 16 if direct else 2)
    monkeypatch.setattr(kernel, "_BLOCK_ROWS", 4)  # several blocks a segment
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    X = (rng.standard_normal((offsets[-1], 4)) * 3).astype(dtype)
    w = rng.random(len(X)) + 0.5 if weighted else None
    # far centers too: clusters without rows keep theirs
    centers = np.concatenate([rng.standard_normal((len(sizes), 3, 4)),
                              np.full((len(sizes), 1, 4), 50.0)], axis=1)
    threads = numba.get_num_threads()
    # four tasks a pass: whether a segment is shared does not depend on the machine's cores
    numba.set_num_threads(1)
    request.addfinalizer(lambda: numba.set_num_threads(threads))
    steps = kernel.SegmentSteps(X, offsets, weights=w)
    stepwise = kernel.SegmentSteps(X, offsets, weights=w)
    assert stepwise._plan.private == private
    expected_sizes, expected = stepwise_epochs(stepwise, centers, 7, 0.3)
    before = centers.copy()
    got_sizes, got = steps.epochs(centers, 7, 0.3)
    assert got.dtype == np.float64 and np.array_equal(centers, before)
    assert got.tobytes() == expected.tobytes()
    assert got_sizes.tobytes() == expected_sizes.tobytes()
    assert (got_sizes[:, 3] == 0).all() and (got[:, 3] == 50.0).all()
    assert not np.array_equal(got[:, :3], centers[:, :3])  # the epochs moved the others
    none_sizes, unmoved = steps.epochs(centers, 0, 0.3)
    assert (none_sizes == 0).all() and np.array_equal(unmoved, centers)


# --------------------------------------------------------------------------- k-median


def weighted_distance_sum(X, w, c):
    return float(np.sum(w * np.linalg.norm(X - c, axis=1)))


def test_weiszfeld_update_reaches_the_weighted_geometric_median(rng):
    X = rng.standard_normal((7, 3))
    w = rng.uniform(0.5, 3.0, size=7)
    ref = minimize(lambda c: weighted_distance_sum(X, w, c), np.average(X, axis=0, weights=w),
                   method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 20000}).x
    labels = np.zeros(7, dtype=np.int64)
    # from the mean, and from a row (where a plain Weiszfeld step would divide by 0 and stay)
    for start in (X.mean(axis=0), X[2]):
        centers, totals = update_medians(X, labels, start[None], w, n_steps=300)
        np.testing.assert_allclose(centers[0], ref, atol=1e-6)
        assert weighted_distance_sum(X, w, centers[0]) <= \
            weighted_distance_sum(X, w, ref) + 1e-10
        np.testing.assert_allclose(totals, [w.sum()])


def test_weiszfeld_stays_on_a_row_that_is_the_median(rng):
    # a row heavier than all others together is the weighted median (the others' pull is
    # at most their weight): from it the center must not move, from elsewhere it converges
    X = rng.standard_normal((6, 2))
    w = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 6.0])
    labels = np.zeros(6, dtype=np.int64)
    stay, _ = update_medians(X, labels, X[5:], w, n_steps=3)
    np.testing.assert_array_equal(stay[0], X[5])
    reach, _ = update_medians(X, labels, X[:1], w, n_steps=200)
    np.testing.assert_allclose(reach[0], X[5], atol=1e-9)


def test_one_step_from_a_row_is_vardi_and_zhangs(rng):
    # the center sits on row 0 (weight eta): the others pull with R = sum a_i (x_i - c),
    # a_i = w_i / ||x_i - c||, and the center takes the share 1 - eta / ||R|| of the step
    X = rng.standard_normal((5, 2))
    w = np.array([0.7, 1.0, 2.0, 1.5, 1.0])
    a = w[1:] / np.linalg.norm(X[1:] - X[0], axis=1)
    target = a @ X[1:] / a.sum()
    pull = np.linalg.norm(a @ (X[1:] - X[0]))
    assert pull > w[0]  # row 0 is not the median
    expected = X[0] + (1 - w[0] / pull) * (target - X[0])
    centers, _ = update_medians(X, np.zeros(5, dtype=np.int64), X[:1], w, n_steps=1)
    np.testing.assert_allclose(centers[0], expected, rtol=1e-12)


def test_weiszfeld_step_and_its_keep_policy():
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    w = np.array([1.0, 1.0, 1.0, 1.0, -2.0])
    labels = np.array([0, 0, 0, 1, 1])
    previous = np.array([[5.0], [7.0], [100.0]])
    centers, totals = update_medians(X, labels, previous, w, n_steps=1)
    # cluster 0: one step from 5, weights 1/5, 1/4, 1/3; cluster 1: denominator
    # 1/3 - 2/4 < 0, kept; cluster 2: empty, kept
    a = np.array([1 / 5, 1 / 4, 1 / 3])
    np.testing.assert_allclose(centers[:, 0], [a @ [0.0, 1.0, 2.0] / a.sum(), 7.0, 100.0])
    np.testing.assert_allclose(totals, [3.0, -1.0, 0.0])


@pytest.mark.parametrize("off_rows", [False, True])
def test_kmedian_lloyd_never_increases_its_cost_and_recovers_blobs(rng, off_rows):
    X, truth, _ = make_blobs(rng, n_clusters=4, n_features=5, per_cluster=40, spread=20.0)
    outlier = np.arange(len(X)) % 13 == 0
    X[outlier] += 6.0 * rng.standard_normal((outlier.sum(), 5))
    w = rng.uniform(0.5, 2.0, size=len(X))
    costs = []
    # one row of each blob, as seeding starts (a center on a row must still leave it), or
    # pushed well off it
    init = X[[5, 45, 85, 125]] + (4.0 * rng.standard_normal((4, 5)) if off_rows else 0.0)
    result = lloyd(X, init, weights=w, objective="kmedian",
                   on_iteration=lambda t, c, labels, sq: costs.append(float(w @ np.sqrt(sq))))
    assert result.objective == "kmedian" and len(costs) == result.n_iter + 1 >= 2
    assert np.all(np.diff(costs) <= 1e-12 * costs[0])
    assert costs[-1] < (0.8 if off_rows else 0.95) * costs[0]
    assert result.converged
    assert np.array_equal(result.labels, brute_force_assign(X, result.centers)[0])
    # one cluster per blob (the outliers may stray)
    assert np.array_equal(result.labels[~outlier], truth[~outlier])
    distances = np.linalg.norm(X - result.centers[result.labels], axis=1)
    assert result.inertia == pytest.approx(float(w @ distances), rel=1e-12)
    assert costs[-1] == pytest.approx(result.inertia, rel=1e-12)
    # sq_distances stay squared; cluster weights are the weight of every cluster
    np.testing.assert_allclose(result.sq_distances, distances**2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.cluster_weights,
                               np.bincount(result.labels, w, minlength=4))
    # the centers are near the weighted medians of their clusters (not the means)
    for j in range(4):
        rows = result.labels == j
        median = minimize(lambda c, r=rows: weighted_distance_sum(X[r], w[r], c),
                          result.centers[j], method="Nelder-Mead",
                          options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 20000}).fun
        assert weighted_distance_sum(X[rows], w[rows], result.centers[j]) <= \
            median * (1 + 1e-4)


def test_kmedian_lloyd_by_device_is_the_per_device_kmedian_lloyd(rng):
    sizes = [30, 7, 55, 30]
    devices = np.repeat(np.arange(4), sizes)
    X = rng.standard_normal((sum(sizes), 3)) + 3 * devices[:, None]
    w = rng.uniform(0.5, 2.0, size=len(X))
    fed = Federation.from_devices(X, devices, sample_weight=w)
    init = np.stack([fed.device_data(z)[:3] for z in range(4)])
    mask = np.ones((4, 3), dtype=bool)
    mask[1, 2] = False  # a padding center: never chosen, kept
    init[1, 2] = 1e6
    # one round (the lock-step runs every device as many rounds as the slowest needs)
    joint = lloyd_by_device(fed, init, center_mask=mask, max_iter=1, objective="kmedian")
    for z in range(4):
        rows = slice(fed.offsets[z], fed.offsets[z + 1])
        alone = lloyd(fed.device_data(z), init[z][mask[z]], weights=fed.weights[rows],
                      max_iter=1, objective="kmedian")
        np.testing.assert_allclose(joint.centers[z][mask[z]], alone.centers, atol=1e-12)
        assert np.array_equal(joint.labels[rows], alone.labels)
        np.testing.assert_allclose(joint.totals[z][mask[z]], alone.cluster_weights)
    np.testing.assert_array_equal(joint.centers[1, 2], init[1, 2])
    full = lloyd_by_device(fed, init, center_mask=mask, objective="kmedian")
    assert full.converged and full.n_iter >= 1
    assert (full.labels[fed.offsets[1]:fed.offsets[2]] != 2).all()
    expected = fed.X - full.centers[fed.device_of_row, full.labels]
    np.testing.assert_allclose(full.sq_distances, (expected**2).sum(1), rtol=1e-9, atol=1e-12)


def test_objective_is_validated(rng):
    X = rng.standard_normal((10, 2))
    with pytest.raises(ValueError, match="objective must be one of"):
        lloyd(X, X[:2], objective="kmedians")
    fed = Federation.from_devices(X, np.arange(10) % 2)
    with pytest.raises(ValueError, match="objective must be one of"):
        lloyd_by_device(fed, np.stack([fed.device_data(z)[:2] for z in range(2)]),
                        objective="median")
    # the default stays k-means
    assert lloyd(X, X[:2]).objective == "kmeans"


def _cycling(seed):
    """Rows with negative weights (as a distributed coreset's centers have) on which Lloyd
    falls into a cycle of its centers (seed 0: k-means from iteration 14 with period 2,
    k-median from 28 with period 6) instead of converging."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 2))
    return X, rng.uniform(-0.6, 1.5, 300), X[rng.choice(300, 6, replace=False)]


@pytest.mark.parametrize("objective", ["kmeans", "kmedian"])
@pytest.mark.parametrize("max_iter", [200, 201, 203])
def test_a_cycling_run_stops_early_with_the_result_of_max_iter(monkeypatch, objective,
                                                               max_iter):
    X, w, init = _cycling(0)
    # with on_iteration every iteration runs (its callback sees them all)
    full = lloyd(X, init, weights=w, max_iter=max_iter, objective=objective,
                 on_iteration=lambda *args: None)
    passes = []
    real_pass = kernel._run_pass
    monkeypatch.setattr(kernel, "_run_pass", lambda *a, **kw: passes.append(1) or
                        real_pass(*a, **kw))
    short = lloyd(X, init, weights=w, max_iter=max_iter, objective=objective)
    assert not full.converged and full.n_iter == max_iter
    assert (short.n_iter, short.converged) == (full.n_iter, full.converged)
    for name in ("centers", "labels", "sq_distances", "cluster_weights"):
        np.testing.assert_array_equal(getattr(short, name), getattr(full, name))
    # the cycle is entered by iteration 28 and is at most 6 long: far fewer passes
    assert len(passes) <= 28 + 2 * 6 + 1


@pytest.mark.parametrize("weighted", [False, True])
def test_elkan_runs_the_same_iterations_as_lloyd(rng, weighted):
    X, _, _ = make_blobs(rng, n_clusters=8, per_cluster=60, n_features=5, spread=3.0)
    w = rng.uniform(0.2, 2.0, len(X)) if weighted else None
    init = X[rng.choice(len(X), 8, replace=False)]
    traces = {}
    for algorithm in ("lloyd", "elkan"):
        trace = traces[algorithm] = []
        result = lloyd(X, init, weights=w, algorithm=algorithm, on_iteration=lambda t, c, lab,
                       sq, trace=trace: trace.append((c.copy(), lab.copy(), sq.sum())))
        traces[algorithm + " result"] = result
    assert len(traces["lloyd"]) == len(traces["elkan"]) > 3
    for (c_l, lab_l, sq_l), (c_e, lab_e, sq_e) in zip(traces["lloyd"], traces["elkan"],
                                                      strict=True):
        np.testing.assert_allclose(c_e, c_l, rtol=1e-12)
        np.testing.assert_array_equal(lab_e, lab_l)
        # every Elkan assignment is the nearest center, by an independent computation
        np.testing.assert_array_equal(lab_e, brute_force_assign(X, c_e)[0])
        assert sq_e == pytest.approx(sq_l, rel=1e-10)
    lloyd_result, elkan = traces["lloyd result"], traces["elkan result"]
    assert elkan.converged and elkan.n_iter == lloyd_result.n_iter
    np.testing.assert_allclose(elkan.cluster_weights, lloyd_result.cluster_weights)
    assert elkan.inertia == pytest.approx(lloyd_result.inertia, rel=1e-10)


def test_elkan_on_negative_weights_matches_a_brute_force_lloyd():
    X, w, init = _cycling(3)
    centers = init.copy()
    for _ in range(12):  # Lloyd by hand: nearest center, weighted mean where the weight > 0
        labels = brute_force_assign(X, centers)[0]
        totals = np.bincount(labels, weights=w, minlength=6)
        sums = np.stack([np.bincount(labels, weights=w * X[:, f], minlength=6)
                         for f in range(2)], axis=1)
        centers = np.where(totals[:, None] > 0, sums / np.where(totals > 0, totals, 1)[:, None],
                           centers)
    labels = brute_force_assign(X, centers)[0]
    result = lloyd(X, init, weights=w, max_iter=12, algorithm="elkan")
    np.testing.assert_allclose(result.centers, centers, rtol=1e-12)
    np.testing.assert_array_equal(result.labels, labels)


def test_elkan_is_kmeans_only_and_the_algorithm_is_validated(rng):
    X = rng.standard_normal((20, 2))
    with pytest.raises(ValueError, match="k-means only"):
        lloyd(X, X[:2], algorithm="elkan", objective="kmedian")
    with pytest.raises(ValueError, match="algorithm"):
        lloyd(X, X[:2], algorithm="hamerly")

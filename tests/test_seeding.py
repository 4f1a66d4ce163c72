"""k-means++ seeding: the D^2 w distribution (D w for k-median), centralized and over a
federation, and its cost."""

import numpy as np
import pytest
from scipy.stats import chisquare

from fedclust.communication import Communication
from fedclust.federation import Federation
from fedclust.seeding import (
    distributed_greedy_kmeans_plusplus,
    distributed_kmeans_plusplus,
    distributed_random_init,
    greedy_uniforms,
    initial_centers,
    kmeans_plusplus,
    kmeans_plusplus_by_device,
)

POINTS = np.array([[0.0], [1.0], [3.0], [10.0], [0.5], [2.0]])
WEIGHTS = np.array([1.0, 3.0, 0.5, 2.0, 0.0, 1.5])
DEVICES = np.array([0, 0, 1, 1, 2, 2])


def exact_pair_probabilities(X, w, power=2):
    """P(first = i, second = j) of weighted k-means++: w_i / sum w, then w_j D^p_ij / sum."""
    n = len(X)
    p = np.zeros((n, n))
    first = w / w.sum()
    for i in range(n):
        d2 = w * np.abs(X[:, 0] - X[i, 0]) ** power
        if d2.sum() > 0:
            p[i] = first[i] * d2 / d2.sum()
    return p


def exact_greedy_pair_probabilities(X, w, power):
    """P(first = i, second = j) of greedy k-means++ with k = 2 (2 + floor(ln 2) = 2 trials):
    the first center proportional to w, then two candidates i.i.d. proportional to w D^p, the
    one of lower potential sum w min(D, D_c)^p kept (the first drawn on a tie)."""
    n = len(X)
    D = np.abs(X[:, 0][:, None] - X[:, 0][None, :])
    p = np.zeros((n, n))
    first = w / w.sum()
    for i in range(n):
        q = w * D[i] ** power
        q = q / q.sum()
        pots = np.array([np.sum(w * np.minimum(D[i], D[c]) ** power) for c in range(n)])
        drawable = np.flatnonzero(q > 0)
        gaps = np.abs(pots[drawable][:, None] - pots[drawable][None, :])
        assert gaps[~np.eye(len(drawable), dtype=bool)].min() > 1e-6  # no tie to break
        for a in drawable:
            for b in drawable:
                p[i, a if pots[a] <= pots[b] else b] += first[i] * q[a] * q[b]
    return p


def draw_pairs(draw, n, draws):
    counts = np.zeros((n, n))
    for _ in range(draws):
        rows = draw()
        counts[rows[0], rows[1]] += 1
    return counts


def assert_matches(counts, probabilities):
    expected = probabilities * counts.sum()
    assert counts[probabilities == 0].sum() == 0  # zero-weight and zero-distance rows: never
    mask = probabilities > 0
    assert chisquare(counts[mask], expected[mask]).pvalue > 1e-3


def test_weighted_kmeans_plusplus_follows_d2_w_sampling():
    rng = np.random.default_rng(0)
    counts = draw_pairs(lambda: kmeans_plusplus(POINTS, 2, sample_weight=WEIGHTS,
                                                random_state=rng)[1], 6, 20000)
    assert_matches(counts, exact_pair_probabilities(POINTS, WEIGHTS))


def test_weighted_d_sampling_for_kmedian_follows_w_d():
    rng = np.random.default_rng(4)
    counts = draw_pairs(lambda: kmeans_plusplus(POINTS, 2, sample_weight=WEIGHTS,
                                                random_state=rng, power=1)[1], 6, 20000)
    assert_matches(counts, exact_pair_probabilities(POINTS, WEIGHTS, power=1))
    # D and D^2 sampling differ here: the same counts reject the D^2 distribution
    expected = exact_pair_probabilities(POINTS, WEIGHTS) * counts.sum()
    mask = expected > 0
    assert chisquare(counts[mask], expected[mask]).pvalue < 1e-6


@pytest.mark.parametrize("power", [1, 2])
def test_greedy_seeding_by_device_draws_and_scores_by_d_to_the_power(power):
    # two groups and a far point: D and D^2 potentials rank the candidates differently (drawing
    # by one power and scoring by the other is 0.14 off in total variation)
    X = np.array([[0.0], [0.2], [3.0], [3.3], [3.5], [3.85], [9.0], [6.0]])
    w = np.array([1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    fed = Federation.from_devices(X, np.zeros(8, dtype=int), sample_weight=w)
    rng = np.random.default_rng(5)
    counts = draw_pairs(lambda: fed.order[kmeans_plusplus_by_device(
        fed, 2, random_state=rng, power=power)[0]], 8, 20000)
    assert_matches(counts, exact_greedy_pair_probabilities(X, w, power))


def test_power_is_validated():
    with pytest.raises(ValueError, match="power must be 1"):
        kmeans_plusplus(POINTS, 2, power=3)
    fed = Federation.from_devices(POINTS, DEVICES)
    with pytest.raises(ValueError, match="power must be 1"):
        kmeans_plusplus_by_device(fed, 1, power=0.5)


def test_distributed_kmeans_plusplus_has_the_centralized_weighted_distribution():
    fed = Federation.from_devices(POINTS, DEVICES, sample_weight=WEIGHTS)
    rng = np.random.default_rng(1)
    counts = draw_pairs(lambda: fed.order[distributed_kmeans_plusplus(fed, 2, rng,
                                                                      Communication())[1]],
                        6, 20000)
    assert_matches(counts, exact_pair_probabilities(POINTS, WEIGHTS))


def test_distributed_greedy_seeding_has_scikit_learns_greedy_distribution():
    """k = 2: the first center proportional to w, then 2 + floor(ln 2) = 2 candidates drawn
    proportional to w D^2 over the federation, the one of lower potential kept."""
    fed = Federation.from_devices(POINTS, DEVICES, sample_weight=WEIGHTS)
    rng = np.random.default_rng(6)
    counts = draw_pairs(lambda: fed.order[distributed_greedy_kmeans_plusplus(
        fed, 2, rng, Communication())[1]], 6, 20000)
    assert_matches(counts, exact_greedy_pair_probabilities(POINTS, WEIGHTS, 2))


def test_greedy_seeding_costs_two_rounds_per_center_and_one(rng):
    X = rng.normal(size=(60, 5))
    fed = Federation.from_devices(X, np.arange(60) % 6)
    Z, d, k = fed.n_devices, fed.n_features, 4
    trials = 2 + int(np.log(k))
    comm = Communication()
    centers, rows = distributed_greedy_kmeans_plusplus(fed, k, np.random.default_rng(0), comm)
    np.testing.assert_array_equal(centers, fed.X[rows])
    assert len(set(rows.tolist())) == k
    assert comm["rounds"] == 2 * k + 1
    # sizes, the first center's mass, per further center the candidates' potentials
    assert comm.total("seed_potential") == (k - 1) * Z * trials
    assert comm.total("seed_candidates") == (k - 1) * Z * trials * d
    assert comm.total("seed_point") == d + (k - 1) * trials * d
    assert comm.total("seed_choice", "ints") == (k - 2) * Z
    with pytest.raises(ValueError, match="n_local_trials must be >= 1"):
        distributed_greedy_kmeans_plusplus(fed, k, np.random.default_rng(0), Communication(),
                                           n_local_trials=0)


def test_greedy_seeding_separates_well_separated_groups_every_time():
    # five tight 1-D groups: exact k-means++ puts two centers in one group on some draws,
    # the greedy seeding (3 candidates per center) on none of these
    rng = np.random.default_rng(8)
    X = (np.repeat(np.arange(5.0), 40) + rng.normal(0, 0.05, 200))[:, None]
    fed = Federation.from_devices(X, np.arange(200) % 10)
    groups = np.round(fed.X[:, 0]).astype(int)
    plain_misses = greedy_misses = 0
    for seed in range(200):
        _, plain = distributed_kmeans_plusplus(fed, 5, np.random.default_rng(seed),
                                               Communication())
        _, greedy = distributed_greedy_kmeans_plusplus(fed, 5, np.random.default_rng(seed),
                                                       Communication())
        plain_misses += len(set(groups[plain])) < 5
        greedy_misses += len(set(groups[greedy])) < 5
    assert plain_misses > 5 and greedy_misses == 0


def test_weights_act_as_repeated_rows():
    """Integer weights: the same distribution over distinct points as repeating the rows."""
    w = np.array([1, 3, 1, 2, 1, 2])
    repeated = np.repeat(POINTS, w, axis=0)
    origin = np.repeat(np.arange(6), w)
    rng = np.random.default_rng(2)
    counts = draw_pairs(lambda: origin[kmeans_plusplus(repeated, 2, random_state=rng)[1]],
                        6, 20000)
    assert_matches(counts, exact_pair_probabilities(POINTS, w.astype(float)))


def test_negative_and_zero_weights_are_never_drawn():
    w = np.array([1.0, -2.0, 1.0, 0.0, 1.0, -0.5])
    rng = np.random.default_rng(3)
    for _ in range(300):
        _, rows = kmeans_plusplus(POINTS, 3, sample_weight=w, random_state=rng)
        assert set(rows.tolist()) <= {0, 2, 4}
    # more centers than rows of positive weight: the later draws repeat them (the estimators
    # warn about fewer distinct points than clusters), never a row of weight <= 0
    _, rows = kmeans_plusplus(POINTS, 4, sample_weight=w, random_state=0)
    assert set(rows.tolist()) == {0, 2, 4}
    with pytest.raises(ValueError, match="sample_weight has no positive weight"):
        kmeans_plusplus(POINTS, 2, sample_weight=np.zeros(len(w)), random_state=0)


def test_kmeans_plusplus_seeding_costs_two_rounds_per_center(rng):
    X = rng.normal(size=(60, 5))
    fed = Federation.from_devices(X, np.arange(60) % 6)
    Z, d = fed.n_devices, fed.n_features
    comm = Communication()
    centers, rows = distributed_kmeans_plusplus(fed, 4, np.random.default_rng(0), comm)
    # first center: sizes up (ints), the point up; then per center: the previous center down,
    # one mass per device up, the point up
    assert comm["rounds"] == 8
    assert comm["ints_up"] == Z
    assert comm["floats_up"] == 4 * d + 3 * Z
    assert comm["floats_down"] == 3 * Z * d
    np.testing.assert_array_equal(centers, fed.X[rows])
    weighted = Communication()
    distributed_kmeans_plusplus(Federation.from_devices(X, np.arange(60) % 6,
                                                        sample_weight=np.ones(60)),
                                4, np.random.default_rng(0), weighted)
    assert weighted["ints_up"] == 0 and weighted["floats_up"] == 4 * d + 4 * Z


def test_random_init_picks_distinct_rows_and_asks_their_owners(rng):
    X = rng.normal(size=(40, 3))
    fed = Federation.from_devices(X, np.arange(40) % 4)
    comm = Communication()
    centers, rows = distributed_random_init(fed, 7, np.random.default_rng(0), comm)
    assert len(set(rows.tolist())) == 7 and comm["rounds"] == 2
    assert comm["floats_up"] == 7 * 3 and comm["ints_down"] == 7
    with pytest.raises(ValueError, match="exceeds the"):
        distributed_random_init(fed, 41, np.random.default_rng(0), Communication())


def test_initial_centers_validates_the_init_parameter(rng):
    fed = Federation.from_devices(rng.normal(size=(20, 6)), np.arange(20) % 2)
    with pytest.raises(ValueError, match="init must be one of"):
        initial_centers("farthest", fed, 4, np.random.default_rng(0), Communication())
    with pytest.raises(ValueError, match=r"init array must have shape \(4, 6\)"):
        initial_centers(np.zeros((3, 6)), fed, 4, np.random.default_rng(0), Communication())
    given = np.ones((4, 6))
    comm = Communication()
    np.testing.assert_array_equal(initial_centers(given, fed, 4, None, comm), given)
    assert comm["rounds"] == 0


@pytest.mark.parametrize("power", [2, 1])
def test_kmeans_plusplus_by_device_finds_every_cluster_of_every_device(rng, power):
    centers = 50.0 * rng.standard_normal((12, 4))
    per_device = [3, 1, 4, 4]  # clusters held by each device, seeded with as many centers
    X, devices, truth = [], [], []
    start = 0
    for z, k in enumerate(per_device):
        labels = np.repeat(np.arange(start, start + k), 30)
        X.append(centers[labels] + rng.standard_normal((len(labels), 4)))
        devices.append(np.full(len(labels), z))
        truth.append(labels)
        start += k
    fed = Federation.from_devices(np.vstack(X), np.concatenate(devices))
    truth = np.concatenate(truth)[fed.order]
    rows = kmeans_plusplus_by_device(fed, np.array(per_device), random_state=0, power=power)
    assert rows.shape == (4, 4)
    for z, k in enumerate(per_device):
        chosen = rows[z, :k]
        assert (rows[z, k:] == -1).all()
        assert ((chosen >= fed.offsets[z]) & (chosen < fed.offsets[z + 1])).all()
        # greedy seeding (D^2 or D) on well-separated clusters takes one seed from each
        assert sorted(truth[chosen]) == sorted(set(truth[fed.offsets[z]:fed.offsets[z + 1]]))


def test_kmeans_plusplus_by_device_never_draws_zero_weight_and_names_a_short_device(rng):
    X = rng.standard_normal((10, 2))
    w = np.array([0, 0, 1, 1, 1, 0, 1, 0, 0, 1], dtype=float)
    fed = Federation.from_devices(X, np.repeat([7, 8], 5), sample_weight=w)
    for seed in range(20):
        rows = kmeans_plusplus_by_device(fed, np.array([3, 2]), random_state=seed)
        assert (fed.weights[rows.ravel()] > 0).all()
    with pytest.raises(ValueError, match="n_clusters=3 on device 8 exceeds its 2 rows"):
        kmeans_plusplus_by_device(fed, np.array([3, 3]))


@pytest.mark.parametrize("power", [1, 2])
def test_greedy_seeding_of_float32_rows_draws_what_their_float64_copy_draws(rng, power):
    # the kernel streams float32 rows as they are (not a float64 copy) and takes every
    # product in float64: the rows it draws are those of the data's float64 copy. (Whether
    # the last bits match is checked at scale: benchmarks/seeding_dtype.py's sha256.)
    X = (rng.standard_normal((3000, 37)) * [10.0 ** (i % 5 - 2) for i in range(37)]).astype(
        np.float32)
    devices = rng.integers(0, 5, len(X))
    w = rng.exponential(size=len(X))
    uniforms = greedy_uniforms(np.full(5, 20), random_state=4)
    rows = {dtype: kmeans_plusplus_by_device(
        Federation.from_devices(X.astype(dtype), devices), 20, weights=w, power=power,
        uniforms=uniforms) for dtype in (np.float32, np.float64)}
    np.testing.assert_array_equal(rows[np.float32], rows[np.float64])


def test_greedy_seeding_of_float32_rows_far_from_the_origin_keeps_float64s_choices():
    # the GEMM form's dot products round at the scale of the rows' norms: summed in float32
    # without centering (a variant measured in benchmarks/results/seeding_float32_dots.md),
    # rows 1,000 from the origin with clusters 1 apart drew 19 of 20 clusters and an 11x
    # potential; float64 products keep float64's choices
    rng = np.random.default_rng(0)
    centers = rng.normal(0.0, 1.0, (20, 30))
    labels = rng.integers(0, 20, 20000)
    X = 1000.0 + centers[labels] + 0.05 * rng.standard_normal((20000, 30))
    devices = np.repeat([0, 1], 10000)
    uniforms = greedy_uniforms(np.full(2, 20), random_state=3)
    rows = {dtype: kmeans_plusplus_by_device(Federation.from_devices(X.astype(dtype), devices),
                                             20, uniforms=uniforms)
            for dtype in (np.float32, np.float64)}
    np.testing.assert_array_equal(rows[np.float32], rows[np.float64])
    for z in range(2):  # every device's seeds hit all 20 clusters (rows already sorted)
        assert len(set(labels[rows[np.float32][z]].tolist())) == 20

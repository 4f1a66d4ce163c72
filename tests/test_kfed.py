import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from fedclust import KFed, structured_partition
from fedclust.algorithms.kfed import farthest_point_seeding
from fedclust.data import make_separated_mixture
from fedclust.exceptions import InfeasibleSettingError
from fedclust.metrics import clustering_accuracy


def mixture(seed, k=9, d=12, c=20.0, per_cluster=60, k_prime=3, m0=4):
    mix = make_separated_mixture(k, d, c, samples_per_cluster=per_cluster,
                                 device_clusters=k_prime, devices_per_cluster=m0,
                                 random_state=seed)
    devices = structured_partition(mix.labels, k_prime, m0, random_state=seed, groups=mix.groups)
    return mix, devices


def test_recovers_planted_clusters_on_a_structured_federation():
    mix, devices = mixture(0)
    km = KFed(9, 3, random_state=0).fit(mix.X, devices=devices)
    assert clustering_accuracy(mix.labels, km.labels_) == 1.0
    # the global centers are the planted ones up to the local estimation error
    nearest = np.linalg.norm(km.cluster_centers_[:, None] - mix.centers[None], axis=-1).min(1)
    spread = np.linalg.norm(mix.centers[0] - mix.centers[1])
    assert nearest.max() < 0.05 * spread
    assert np.array_equal(km.predict(mix.X), km.labels_)


def test_communication_is_one_round_with_exact_counts():
    mix, devices = mixture(1)
    km = KFed(9, 3, server_weighting="uniform", refine_max_iter=0,
              random_state=1).fit(mix.X, devices=devices)
    Z, d = len(np.unique(devices)), mix.X.shape[1]
    comm = km.communication_
    assert comm["rounds"] == 1
    assert comm["floats_up"] == len(km.local_centers_) * d == Z * 3 * d
    # the download is one message of cluster identities, one per local center
    assert comm["floats_down"] == 0 and comm["ints_down"] == Z * 3
    assert comm["messages_up"] == comm["messages_down"] == Z
    sized = KFed(9, 3, server_weighting="size", refine_max_iter=0, random_state=1).fit(
        mix.X, devices=devices)
    assert sized.communication_["floats_up"] == Z * 3 * d
    assert sized.communication_["ints_up"] == Z * 3  # one size per local center


def test_labels_are_induced_by_local_clusters():
    """Definition 3.3: every point takes the global label of its (nearest) local center."""
    mix, devices = mixture(2, c=0.5)  # weak separation: local and global errors do occur
    km = KFed(9, 3, refine_max_iter=0, random_state=2).fit(mix.X, devices=devices)
    for dev in np.unique(devices):
        rows = np.flatnonzero(devices == dev)
        own = km.local_center_devices_ == dev
        # at Lloyd's fixed point each point's local cluster is its nearest local center
        nearest = np.linalg.norm(mix.X[rows][:, None] - km.local_centers_[own][None],
                                 axis=-1).argmin(axis=1)
        assert np.array_equal(km.labels_[rows], km.local_center_labels_[own][nearest])


def test_same_seed_same_result_and_seed_matters():
    mix, devices = mixture(3, c=0.05)
    a = KFed(9, 3, random_state=7).fit(mix.X, devices=devices)
    b = KFed(9, 3, random_state=7).fit(mix.X, devices=devices)
    assert np.array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    others = [KFed(9, 3, random_state=s).fit(mix.X, devices=devices).cluster_centers_
              for s in range(5)]
    assert any(not np.array_equal(o, a.cluster_centers_) for o in others)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_farthest_point_seeding_is_the_definition(dtype):
    """Against a plain numpy reading of steps 3-6: each new row is the first of the rows
    farthest from those chosen (duplicates of chosen rows included, at distance 0)."""
    rng = np.random.default_rng(3)
    points = rng.normal(size=(400, 7)).astype(dtype)
    points[::9] = points[4]
    first = np.array([4, 17])
    chosen = list(first)
    while len(chosen) < 25:
        diff = points[:, None, :].astype(np.float64) - points[chosen][None].astype(np.float64)
        chosen.append(int(np.argmax((diff ** 2).sum(2).min(1))))
    assert farthest_point_seeding(points, first, 25).tolist() == chosen


@pytest.mark.parametrize("slots", [None, 3])
def test_farthest_point_seeding_with_a_shared_cache_chooses_the_same_rows(slots):
    """The server's starts share the distance rows of the rows they choose (all of them, or
    the first 3 while the others are computed as before): the same choices, start by start."""
    from fedclust.algorithms.kfed import _FarthestCache

    rng = np.random.default_rng(5)
    points = rng.normal(size=(300, 6))
    points[::7] = points[2]
    cache = _FarthestCache(len(points), slots=slots)
    for first in ([2], [11, 40], [150], [2]):
        alone = farthest_point_seeding(points, np.array(first), 20)
        shared = farthest_point_seeding(points, np.array(first), 20, cache=cache)
        np.testing.assert_array_equal(shared, alone)
    kept = np.flatnonzero(cache.slot_of >= 0)
    assert cache.n_rows[0] == len(kept)
    # rows were kept (the first 3 chosen with 3 slots) and later starts reused them
    assert len(kept) == 3 if slots == 3 else len(kept) > 20
    np.testing.assert_allclose(cache.rows[cache.slot_of[kept]],
                               ((points[kept][:, None] - points[None]) ** 2).sum(-1))


def test_farthest_point_seeding_by_hand():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [10.0, 0.0], [0.0, 5.0], [9.0, 1.0]])
    chosen = farthest_point_seeding(points, np.array([0]), 3)
    assert chosen.tolist() == [0, 2, 3]
    with pytest.raises(InfeasibleSettingError, match="only 2 distinct local centers"):
        farthest_point_seeding(np.array([[0.0], [0.0], [1.0]]), np.array([0]), 3)


def test_the_printed_server_runs_exactly_one_lloyd_round():
    mix, devices = mixture(4, c=0.3)
    km = KFed(9, 3, server_starts=1, server_lloyd_rounds=1, random_state=4)
    km.fit(mix.X, devices=devices)
    # seeds: the k' centers of one device first (the start device reported), then farthest
    # points among all local centers
    first_device = km.local_center_devices_[
        np.all(km.local_centers_ == km.server_init_[0], axis=1)][0]
    assert first_device == km.server_start_device_
    own = km.local_centers_[km.local_center_devices_ == first_device]
    np.testing.assert_array_equal(km.server_init_[:3], own)
    # Algorithm 2, step 7: tau assigns each local center to its nearest seed, the centers are
    # the means of tau, and the labels follow tau (not a second assignment)
    to_seed = np.linalg.norm(km.local_centers_[:, None] - km.server_init_[None],
                             axis=-1).argmin(axis=1)
    expected = np.stack([km.local_centers_[to_seed == j].mean(axis=0) for j in range(9)])
    np.testing.assert_allclose(km.cluster_centers_, expected, atol=1e-9)
    assert np.array_equal(km.local_center_labels_, to_seed) and km.n_iter_ == 1
    converged = KFed(9, 3, server_lloyd_rounds="converge", random_state=4)
    converged.fit(mix.X, devices=devices)
    nearest = np.linalg.norm(converged.local_centers_[:, None] -
                             converged.cluster_centers_[None], axis=-1).argmin(axis=1)
    assert np.array_equal(converged.local_center_labels_, nearest)
    assert converged.n_iter_ >= 1
    # more rounds can only lower the server's k-means cost on the local centers
    more = KFed(9, 3, server_lloyd_rounds=50, random_state=4).fit(mix.X, devices=devices)

    def server_cost(m):
        return np.sum((m.local_centers_ - m.cluster_centers_[m.local_center_labels_]) ** 2)

    assert server_cost(more) <= server_cost(km) + 1e-9


def test_small_devices_and_low_dimension_are_handled(rng):
    # d = 2 < k' = 3 (no projection), one device with a single point, one with two
    X = np.vstack([rng.normal(m, 0.1, size=(30, 2)) for m in ([0, 0], [5, 0], [0, 5])])
    X = np.vstack([X, [[5.0, 5.0]], [[0.1, 0.0], [5.1, 0.1]]])
    devices = np.concatenate([np.repeat([0, 1, 2], 30), [3], [4, 4]])
    km = KFed(4, 3, refine_max_iter=0, random_state=0).fit(X, devices=devices)
    assert km.labels_.shape == (len(X),)
    assert km.communication_["floats_up"] == len(km.local_centers_) * 2
    assert 3 in km.local_center_devices_ and np.sum(km.local_center_devices_ == 3) == 1
    assert np.sum(km.local_center_devices_ == 4) == 2


def test_partial_participation():
    mix, devices = mixture(5, k=9, m0=6)
    Z = len(np.unique(devices))
    km = KFed(9, 3, participation=0.5, refine_max_iter=0, random_state=5).fit(mix.X,
                                                                          devices=devices)
    n_part = int(np.floor(0.5 * Z))
    assert len(km.participating_devices_) == n_part == km.communication_["devices_participating"]
    kinds = km.communication_.by_kind().set_index("kind")
    assert kinds.loc["local_centers", "messages"] == n_part
    assert kinds.loc["local_centers", "floats"] == n_part * 3 * mix.X.shape[1]
    # the failed devices are clustered afterwards: their centers go up late, ids come back
    assert kinds.loc["late_local_centers", "messages"] == Z - n_part
    assert kinds.loc["late_cluster_ids", "ints"] == (Z - n_part) * 3
    assert km.communication_["rounds"] == 1
    # devices that failed still get the right clusters afterwards (Theorem 3.2 route)
    assert clustering_accuracy(mix.labels, km.labels_) == 1.0


def test_new_devices_are_clustered_consistently_through_predict():
    mix, devices = mixture(6, per_cluster=80)
    train = devices % 4 != 3      # the last device of every group joins after the fit
    km = KFed(9, 3, random_state=6).fit(mix.X[train], devices=devices[train])
    new_labels = km.predict(mix.X[~train], devices=devices[~train])
    # same naming of clusters as in training, for every new point
    mapping = {t: p for t, p in zip(mix.labels[train], km.labels_, strict=True)}
    expected = np.array([mapping.get(t, -1) for t in mix.labels[~train]])
    assert np.all(expected >= 0)
    assert np.array_equal(new_labels, expected)


def test_errors_name_the_argument():
    X = np.zeros((10, 2))
    devices = np.arange(10) % 2
    with pytest.raises(ValueError, match="device_clusters must be <= n_clusters=3; got 4"):
        KFed(3, 4).fit(X, devices=devices)
    with pytest.raises(ValueError, match="device_clusters must be <= n_clusters=3; got 4"):
        KFed(3, 4).check_params()  # the step API's check, before any data
    with pytest.raises(ValueError, match=r"'participation' parameter of KFed must be a float "
                                         r"in the range \(0.0, 1.0\]. Got 1.5"):
        KFed(3, 2, participation=1.5).fit(X, devices=devices)
    with pytest.raises(ValueError, match="'server_weighting' parameter of KFed must be a str "
                                         "among"):
        KFed(3, 2, server_weighting="mean").fit(X, devices=devices)
    with pytest.raises(ValueError, match="one device id per row of X"):
        KFed(3, 2).fit(X, devices=devices[:5])


def test_infeasible_settings_say_what_limits_the_local_centers():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    two_devices = np.arange(40) % 2
    # more clusters than samples: neither device_clusters nor participation would help
    with pytest.raises(ValueError, match=r"n_clusters=8 exceeds the number of samples \(5\)"):
        KFed(8, 2).fit(X[:5], devices=two_devices[:5])
    with pytest.raises(InfeasibleSettingError,
                       match=r"2 devices can send at most 2 x k'=2 = 4 local centers: raise "
                             r"device_clusters to at least 4"):
        KFed(8, 2, random_state=0).fit(X, devices=two_devices)
    with pytest.raises(InfeasibleSettingError,
                       match=r"only 1 of the 4 devices participate \(participation=0.25\)"):
        KFed(4, 2, participation=0.25, random_state=0).fit(X, devices=np.arange(40) % 4)
    small_devices = np.array([0, 1, 2, 2, 2, 2])  # sizes 1, 1, 4: at most 1 + 1 + 2 centers
    with pytest.raises(InfeasibleSettingError, match="devices hold too few points for k'=2"):
        KFed(5, 2, random_state=0).fit(X[:6], devices=small_devices)
    # every device's one local center is its mean, the same origin for all
    spread = np.array([[-1.0, 0], [1, 0], [-2, 0], [2, 0], [-3, 0], [3, 0]])
    with pytest.raises(InfeasibleSettingError, match="only 1 distinct local centers"):
        KFed(3, 1, random_state=0).fit(spread, devices=np.repeat(np.arange(3), 2))
    # fewer distinct points than clusters: scikit-learn's warning, and the seeds repeat
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(1\) found"):
        km = KFed(4, 1, random_state=0).fit(np.zeros((6, 2)), devices=np.arange(6))
    assert (km.cluster_centers_ == 0).all() and km.inertia_ == 0.0


def test_is_a_scikit_learn_estimator():
    km = KFed(5, 2, random_state=3, participation=0.8)
    twin = clone(km)
    assert twin.get_params() == km.get_params()
    assert "KFed(" in repr(km)


def test_each_device_gets_its_own_number_of_clusters():
    mix, _ = mixture(7, k=9, k_prime=3, m0=2)
    devices, per_device = structured_partition(mix.labels, 3, 2, random_state=7,
                                               groups=mix.groups, return_device_clusters=True)
    assert per_device.tolist() == [3] * 6
    # one device is told it holds 2 clusters: it sends 2 centers, the others 3
    per_device[0] = 2
    km = KFed(9, per_device, random_state=7).fit(mix.X, devices=devices)
    sent = np.bincount(np.searchsorted(np.unique(devices), km.local_center_devices_))
    assert sent.tolist() == [2, 3, 3, 3, 3, 3]
    assert km.communication_["ints_down"] == sent.sum()
    assert np.array_equal(km.device_clusters_, per_device)
    same = KFed(9, np.full(6, 3), random_state=7).fit(mix.X, devices=devices)
    np.testing.assert_array_equal(same.cluster_centers_,
                                  KFed(9, 3, random_state=7).fit(mix.X, devices=devices)
                                  .cluster_centers_)
    with pytest.raises(ValueError, match="one int per device"):
        KFed(9, [3, 3], random_state=7).fit(mix.X, devices=devices)
    with pytest.raises(ValueError, match="device_clusters must be <= n_clusters=9 on every "
                                         "device; got 10"):
        KFed(9, np.full(6, 10)).fit(mix.X, devices=devices)


def test_edge_cases_the_authors_code_fails_on():
    rng = np.random.default_rng(0)
    # duplicated points: k-means++ draws a seed twice, its S_r is empty (a NaN mean in the
    # authors' code); the seed point starts Lloyd and the emptied cluster is not sent
    dup = np.vstack([np.zeros((6, 3)), np.full((6, 3), 9.0), rng.normal(20, 0.1, (6, 3))])
    devices = np.repeat([0, 1], 9)  # device 0: two distinct points for k^(z) = 3 clusters
    km = KFed(3, [3, 2], random_state=1).fit(dup, devices=devices)
    assert np.sum(km.local_center_devices_ == 0) == 2
    assert clustering_accuracy(np.repeat([0, 1, 2], 6), km.labels_) == 1.0
    # fewer features than local clusters: no projection
    X = np.concatenate([rng.normal(m, 0.05, 20) for m in (0, 5, 10)])[:, None]
    km = KFed(3, 3, random_state=0).fit(X, devices=np.arange(60) % 2)
    assert clustering_accuracy(np.repeat([0, 1, 2], 20), km.labels_) == 1.0
    # exactly k local centers reach the server (the authors' code asserts more than k)
    X, devices = two_by_two(rng)
    km = KFed(4, 2, random_state=0).fit(X, devices=devices)
    assert len(km.local_centers_) == 4 and len(np.unique(km.local_center_labels_)) == 4


def two_by_two(rng):
    centers = np.array([[0, 0], [10, 0], [0, 10], [10, 10.0]])
    labels = np.repeat(np.arange(4), 30)
    return centers[labels] + rng.normal(0, 0.1, (120, 2)), labels // 2


def test_local_means_knob():
    rng = np.random.default_rng(3)
    X, devices = two_by_two(rng)
    for means in ("projected", "original"):
        km = KFed(4, 2, local_means=means, random_state=0).fit(X, devices=devices)
        assert clustering_accuracy(np.repeat(np.arange(4), 30), km.labels_) == 1.0
    with pytest.raises(ValueError, match="'local_means' parameter of KFed must be a str among"):
        KFed(4, 2, local_means="mean").fit(X, devices=devices)


def wide_cluster_federation(seed=0):
    """A wide cluster (sd 5 along one axis) and three round ones, two of them 10 apart: 12
    devices of two clusters each, and 12 small devices holding only the wide cluster, whose two
    local centers (the wide cluster's halves) start the server's seeding with two seeds in one
    cluster if such a device is picked (issue 24)."""
    rng = np.random.default_rng(seed)
    means = np.array([[0, 0, 0, 0], [20, 0, 0, 0], [20, 5, 0, 0], [20, -5, 0, 0.0]])
    scale = np.array([5.0, 1, 1, 1])
    X, devices = [], []
    for z, pair in enumerate([(0, 1), (0, 2), (0, 3), (1, 2), (2, 3), (1, 3)] * 2):
        for c in pair:
            X.append(means[c] + (scale if c == 0 else 1.0) * rng.standard_normal((50, 4)))
            devices += [z] * 50
    for z in range(12, 24):
        X.append(means[0] + scale * rng.standard_normal((60, 4)))
        devices += [z] * 60
    return np.vstack(X), np.array(devices)


def test_default_escapes_the_tail_of_a_bad_start():
    """Issue 24: with one random start (Algorithm 2 as printed, the old default) the server
    sometimes seeds from a device holding only the wide cluster and ends in a local optimum far
    from the optimum, with one Lloyd round and to convergence alike; the default tries several
    starts and keeps the best clustering of the local centers."""
    from sklearn.cluster import KMeans

    from fedclust.metrics import kmeans_cost

    X, devices = wide_cluster_federation()
    optimum = KMeans(4, n_init=10, random_state=0).fit(X).inertia_  # independent of fedclust

    def ratios(**params):
        # one-shot: the server's choice alone (the refinement would hide it)
        return np.array([kmeans_cost(X, KFed(4, 2, refine_max_iter=0, random_state=s, **params)
                                     .fit(X, devices=devices).cluster_centers_) / optimum
                         for s in range(16)])

    printed = ratios(server_starts=1, server_lloyd_rounds=1)
    one_start = ratios(server_starts=1)
    default = ratios()
    assert printed.max() > 1.3 and one_start.max() > 1.3
    assert default.max() < 1.1
    assert default.mean() < one_start.mean() and default.mean() < printed.mean()


def test_server_keeps_the_start_with_the_smallest_spread():
    from fedclust.algorithms.kfed import server_clustering
    from fedclust.metrics import kmeans_cost

    X, devices = wide_cluster_federation()
    km = KFed(4, 2, server_starts="all", random_state=0).fit(X, devices=devices)
    points, owner = km.local_centers_, km.local_center_devices_

    spreads, costs = {}, {}
    for z in np.unique(devices):
        _, centers, labels, _, _ = server_clustering(points, owner, [z], 4, "converge")
        spreads[z] = np.linalg.norm(points - centers[labels], axis=1).sum()
        costs[z] = kmeans_cost(X, centers)
    assert spreads[km.server_start_device_] == pytest.approx(min(spreads.values()))
    # some start devices are bad even to convergence; the kept one is the best on the data too
    assert max(costs.values()) > 1.3 * min(costs.values())
    assert costs[km.server_start_device_] == pytest.approx(min(costs.values()))
    # M starts with the k' centers of the kept device
    np.testing.assert_array_equal(km.server_init_[:2], points[owner == km.server_start_device_])
    nearest = np.linalg.norm(points[:, None] - km.cluster_centers_[None], axis=-1).argmin(1)
    assert np.array_equal(km.local_center_labels_, nearest)  # converged


def _each_start_to_its_end(points, owner, starts, k, weights=None):
    """The server's choice computed the long way: every start's Lloyd rounds run to their
    fixed point on their own, the first start of least spread kept."""
    from fedclust.algorithms.kfed import farthest_point_seeding, server_rounds

    best = None
    for z in starts:
        init = points[farthest_point_seeding(points, np.flatnonzero(owner == z), k)]
        centers, labels, n_rounds = server_rounds(points, init, "converge", weights)
        dist = np.linalg.norm(points - centers[labels], axis=1)
        spread = dist.sum() if weights is None else weights @ dist
        if best is None or spread < best[0]:
            best = (spread, centers, labels, n_rounds, z)
    return best[1:]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_server_skipping_rounds_an_earlier_start_ran_keeps_the_same_clustering(seed, weighted):
    """Starts whose rounds reach a partition an earlier start went through stop there; the
    kept clustering is the one every start run to its end gives, bit for bit."""
    from fedclust.algorithms.kfed import server_clustering

    X, devices = wide_cluster_federation(seed)
    km = KFed(4, 2, server_starts="all", random_state=seed).fit(X, devices=devices)
    points, owner = km.local_centers_, km.local_center_devices_
    weights = km.local_center_sizes_.astype(float) if weighted else None
    starts = np.unique(owner)
    _, centers, labels, n_rounds, start = server_clustering(points, owner, starts, 4,
                                                            "converge", weights)
    expected = _each_start_to_its_end(points, owner, starts, 4, weights)
    np.testing.assert_array_equal(centers, expected[0])
    np.testing.assert_array_equal(labels, expected[1])
    assert (n_rounds, start) == expected[2:]


def test_server_runs_one_round_per_start_that_reaches_a_known_partition(monkeypatch):
    """Well-separated local centers: every start's first assignment is the same partition (its
    clusters named differently), so the first start runs its rounds (one update, one
    assignment that confirms it) and each later start stops after its first assignment."""
    import fedclust.algorithms.kfed as kfed

    mix, devices = mixture(0)
    km = KFed(9, 3, server_starts="all", random_state=0).fit(mix.X, devices=devices)
    points, owner = km.local_centers_, km.local_center_devices_
    starts = np.unique(owner)
    assigned = []
    real_assign = kfed.assign
    monkeypatch.setattr(kfed, "assign", lambda P, C: assigned.append(len(C)) or real_assign(P, C))
    kfed.server_clustering(points, owner, starts, 9, "converge")
    rounds = [n for n in assigned if n == 9]  # the seeding's assignments are to k' = 3 rows
    assert len(assigned) - len(rounds) == len(starts)
    assert len(rounds) == 2 + (len(starts) - 1)
    # one round at most (Algorithm 2 as printed): nothing to skip, every start assigns once
    assigned.clear()
    kfed.server_clustering(points, owner, starts, 9, 1)
    assert assigned.count(9) == len(starts)


def test_server_partitions_are_compared_up_to_the_names_of_their_clusters():
    from fedclust.algorithms.kfed import _ServerPaths

    paths = _ServerPaths(3)
    labels = np.array([0, 0, 1, 2, 1, 2])
    renamed = np.array([2, 2, 0, 1, 0, 1])
    assert paths.key(labels) == paths.key(renamed)
    assert paths.key(labels) != paths.key(np.array([0, 1, 1, 2, 1, 2]))
    assert paths.key(np.array([0, 0, 1, 1, 1, 0])) is None  # an empty cluster
    weightless = _ServerPaths(3, weights=np.array([1.0, 1, 1, 0, 1, 0]))
    assert weightless.key(labels) is None  # cluster 2 holds no weight: its center is kept


def test_server_starts_change_nothing_sent_and_are_reproducible():
    X, devices = wide_cluster_federation(1)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(X))
    fits = {starts: KFed(4, 2, server_starts=starts, random_state=3).fit(X, devices=devices)
            for starts in (1, 5, "all")}
    summaries = {s: m.communication_.summary() for s, m in fits.items()}
    assert summaries[1] == summaries[5] == summaries["all"]
    again = KFed(4, 2, server_starts=5, random_state=3).fit(X, devices=devices)
    np.testing.assert_array_equal(again.cluster_centers_, fits[5].cluster_centers_)
    assert again.server_start_device_ == fits[5].server_start_device_
    # sample weights: every start is tried on the weighted local centers, same seed same output
    weighted = [KFed(4, 2, server_weighting="size", random_state=3).fit(X, devices=devices,
                                                                       sample_weight=w)
                for _ in range(2)]
    np.testing.assert_array_equal(weighted[0].cluster_centers_, weighted[1].cluster_centers_)
    assert weighted[0].server_start_device_ in np.unique(devices)


def test_server_starts_is_validated():
    X = np.zeros((10, 2))
    devices = np.arange(10) % 2
    for bad in (0, -1):
        with pytest.raises(ValueError, match="server_starts"):
            KFed(3, 2, server_starts=bad).fit(X, devices=devices)
    with pytest.raises(ValueError, match=r"'server_starts' parameter of KFed must be a str "
                                         r"among {'all'} or an int in the range \[1, inf\)"):
        KFed(3, 2, server_starts="every").fit(X, devices=devices)
    with pytest.raises((TypeError, ValueError), match="server_starts"):
        KFed(3, 2, server_starts=2.5).fit(X, devices=devices)


def test_partial_fit_joins_clients_named_by_strings():
    """Named clients join by name (a new one without ``devices`` gets a fresh name); the
    ledger books the late ones after the fitted ones, by position."""
    mix, devices = mixture(4, c=0.3)
    names = np.array([f"client{z:03d}" for z in range(devices.max() + 1)])[devices]
    late = np.isin(devices, np.unique(devices)[-3:])
    km = KFed(9, 3, random_state=0).fit(mix.X[~late], devices=names[~late])
    fitted = len(km.device_ids_)
    km.partial_fit(mix.X[late], devices=names[late])
    assert km.device_ids_.tolist() == sorted(set(names[~late])) + sorted(set(names[late]))
    edges = km.communication_.by_edge()
    assert set(edges[edges.kind == "late_local_centers"].sender) == {fitted, fitted + 1,
                                                                     fitted + 2}
    km.partial_fit(mix.X[:5])
    assert km.device_ids_[-1] == f"device{fitted + 3}"
    with pytest.raises(ValueError, match="of the fitted ones' kind"):
        km.partial_fit(mix.X[:5], devices=np.full(5, 1000))


def test_partial_fit_lets_new_devices_join_as_theorem_3_2_says():
    mix, devices = mixture(4, c=0.3)
    late = np.isin(devices, np.unique(devices)[-3:])
    km = KFed(9, 3, random_state=0).fit(mix.X[~late], devices=devices[~late])
    centers, n_local = km.cluster_centers_.copy(), len(km.local_centers_)
    rounds = km.communication_["rounds"]
    expected = km.predict(mix.X[late], devices=devices[late])
    assert km.partial_fit(mix.X[late], devices=devices[late]) is km
    # the global centers stay; the new rows take their local centers' global clusters
    np.testing.assert_array_equal(km.cluster_centers_, centers)
    np.testing.assert_array_equal(km.labels_, expected)
    assert clustering_accuracy(mix.labels[late], km.labels_) == 1.0
    new = km.local_center_devices_[n_local:]
    assert set(new) == set(np.unique(devices[late])) and len(new) == 3 * 3
    assert np.array_equal(km.local_center_labels_[n_local:],
                          km.predict(km.local_centers_[n_local:]))
    assert set(km.device_ids_) == set(np.unique(devices))
    # booked as late devices (no new round): 9 local centers up, 9 cluster ids down
    edges = km.communication_.by_edge()
    up = edges[edges.kind == "late_local_centers"]
    assert up.floats.sum() == 9 * mix.X.shape[1] and km.communication_["rounds"] == rounds
    assert edges[edges.kind == "late_cluster_ids"].ints.sum() == 9
    with pytest.raises(ValueError, match="already joined this model"):
        km.partial_fit(mix.X[late], devices=devices[late])
    # unfitted, partial_fit is fit
    fresh = KFed(9, 3, random_state=0).partial_fit(mix.X, devices=devices)
    np.testing.assert_array_equal(
        fresh.cluster_centers_, KFed(9, 3, random_state=0).fit(mix.X, devices=devices)
        .cluster_centers_)

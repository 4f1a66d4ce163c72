import numpy as np
import pytest

from fedclust import Federation, LocalKMeans, iid_partition
from fedclust.lloyd import lloyd
from fedclust.metrics import kmeans_cost, misclustering_by_group, misclustering_rate
from fedclust.rounds import History


def mixture(seed=0, K=4, d=10, n=1200, spread=3.0):
    rng = np.random.default_rng(seed)
    centers = spread * np.eye(K, d)
    y = rng.integers(0, K, size=n)
    X = centers[y] + rng.standard_normal((n, d))
    return X, y, centers


def test_one_local_step_is_centralized_lloyd():
    X, y, centers = mixture()
    machines = iid_partition(len(X), 12, random_state=0)
    init = centers + 0.5
    model = LocalKMeans(4, 1, n_iter=15, init=init).fit(X, devices=machines)
    ref = lloyd(X, init, max_iter=15)
    np.testing.assert_allclose(model.cluster_centers_, ref.centers, atol=1e-10)
    assert np.array_equal(model.labels_, ref.labels)


def test_aggregation_is_weighted_by_local_cluster_sizes():
    # two machines, one cluster: the aggregate of the local means must be the pooled mean
    X = np.array([[0.0], [0.0], [0.0], [10.0]])
    machines = np.array([0, 0, 0, 1])
    model = LocalKMeans(1, 1, n_iter=1, init=np.array([[5.0]])).fit(X, devices=machines)
    assert model.cluster_centers_[0, 0] == pytest.approx(2.5)  # not (0 + 10) / 2


def test_local_steps_between_aggregations_and_communication():
    X, y, centers = mixture(1)
    M, K, d, T, L = 10, 4, X.shape[1], 12, 4
    machines = iid_partition(len(X), M, random_state=1)
    model = LocalKMeans(K, L, n_iter=T, init=centers.copy()).fit(X, devices=machines)
    h = model.history_
    assert h["round"].tolist() == list(range(1, T + 1))
    assert h["aggregated"].tolist() == [t % L == 0 for t in range(1, T + 1)]
    comm = model.communication_
    assert comm["rounds"] == 1 + T // L
    assert comm["floats_down"] == M * K * d * (1 + T // L)
    assert comm["floats_up"] == (T // L) * M * K * d
    assert comm["ints_up"] == (T // L) * M * K  # local cluster sizes
    # T is a multiple of L: the run ends on an aggregation, every machine holds the aggregate
    for z in range(M):
        np.testing.assert_array_equal(model.machine_centers_[z], model.cluster_centers_)
    uneven = LocalKMeans(K, L, n_iter=T + 1, init=centers.copy()).fit(X, devices=machines)
    assert not np.allclose(uneven.machine_centers_[0], uneven.machine_centers_[1])
    assert uneven.communication_["floats_up"] == (T // L + 1) * M * K * d


def test_no_aggregation_never_synchronizes():
    X, y, centers = mixture(2)
    M, K, d = 8, 4, X.shape[1]
    machines = iid_partition(len(X), M, random_state=2)
    model = LocalKMeans(K, None, n_iter=10, init=centers + 0.3).fit(X, devices=machines)
    assert not model.history_["aggregated"].any()
    comm = model.communication_
    assert comm["rounds"] == 1  # the initial broadcast only
    assert comm["floats_up"] == M * K * d  # the one final upload of the reported centers
    # every machine ran plain Lloyd on its own rows
    fed = Federation.from_devices(X, machines)
    for z in range(M):
        alone = lloyd(fed.device_data(z), centers + 0.3, max_iter=10)
        np.testing.assert_allclose(model.machine_centers_[z], alone.centers, atol=1e-10)


def test_callback_sees_every_iteration_and_evaluation_stays_outside_the_fit():
    X, y, centers = mixture(3, spread=4.0)
    machines = iid_partition(len(X), 6, random_state=3)
    history = History({"misclustering": lambda s: misclustering_rate(y, s.labels),
                       "per_machine": lambda s: np.nanmean(
                           misclustering_by_group(y, s.labels, machines, 6))},
                      keep_labels=True)
    model = LocalKMeans(4, 2, n_iter=6, init=centers + 0.8)
    model.fit(X, devices=machines, callback=history)
    frame = history.to_frame()
    assert frame["round"].tolist() == list(range(7))
    # history_ holds the rounds 1..T the callback saw after the initialization (round 0)
    rounds = frame.iloc[1:]
    assert rounds["round"].tolist() == model.history_["round"].tolist()
    assert rounds["aggregated"].tolist() == model.history_["aggregated"].tolist() \
        == [False, True] * 3
    np.testing.assert_allclose(rounds["objective"], model.history_["objective"])
    np.testing.assert_allclose(rounds["global_objective"], model.history_["global_objective"])
    assert model.history_["participants"].tolist() == [0, 6] * 3
    # the last round's labels are the machines' own final labels
    assert np.array_equal(history.labels[-1], model.machine_labels_)
    assert frame["misclustering"].iloc[-1] == pytest.approx(
        misclustering_rate(y, model.machine_labels_))
    assert frame["objective"].iloc[-1] <= frame["objective"].iloc[0]
    assert frame["misclustering"].iloc[-1] < 0.05
    assert "y_true" not in LocalKMeans.fit.__code__.co_varnames


def test_labels_are_the_nearest_reported_centers_also_between_aggregations():
    X, _, centers = mixture(7, spread=2.0)
    machines = iid_partition(len(X), 6, random_state=7)
    model = LocalKMeans(4, 3, n_iter=5, init=centers + 0.6).fit(X, devices=machines)
    assert np.array_equal(model.labels_, model.predict(X))
    assert model.inertia_ == pytest.approx(kmeans_cost(X, model.cluster_centers_))


def test_kmeans_plusplus_init_is_seeded_and_counted():
    X, y, _ = mixture(4)
    machines = iid_partition(len(X), 5, random_state=4)
    a = LocalKMeans(4, 3, n_iter=6, init="k-means++", random_state=9).fit(X, devices=machines)
    b = LocalKMeans(4, 3, n_iter=6, init="k-means++", random_state=9).fit(X, devices=machines)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.communication_["seeding_rounds"] == 8
    assert a.communication_["rounds"] == 8 + 1 + 2


def test_errors_name_the_argument():
    X, y, _ = mixture(5, n=100)
    machines = np.arange(100) % 4
    with pytest.raises(ValueError, match=r"'local_steps' parameter of LocalKMeans must be an "
                                         r"int in the range \[1, inf\) or None"):
        LocalKMeans(4, 0).fit(X, devices=machines)
    with pytest.raises(ValueError, match=r"init array must have shape \(4, 10\)"):
        LocalKMeans(4, 1, init=np.zeros((3, 10))).fit(X, devices=machines)


def test_misclustering_by_group_uses_each_groups_best_matching():
    truth = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    pred = np.array([1, 1, 0, 0, 0, 0, 0, 1])  # group 0 swapped (still perfect), group 1 wrong
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_allclose(misclustering_by_group(truth, pred, groups), [0.0, 0.25])


def test_global_objective_is_the_cost_of_the_aggregated_centers():
    X, y, centers = mixture(6)
    machines = iid_partition(len(X), 6, random_state=6)
    history = History()
    model = LocalKMeans(4, 3, n_iter=3, init=centers + 0.4).fit(X, devices=machines,
                                                                 callback=history)
    h = model.history_
    # the callback's round 0: the initial centers; t = T = 3 ends on an aggregation: the
    # reported centers
    initial = history.records[0]
    assert initial["round"] == 0
    assert initial["global_objective"] == pytest.approx(kmeans_cost(X, centers + 0.4))
    assert h["round"][-1] == 3
    assert h["global_objective"][-1] == pytest.approx(kmeans_cost(X, model.cluster_centers_))
    # right after an aggregation every machine holds the aggregate: both objectives agree
    assert h["objective"][-1] == pytest.approx(h["global_objective"][-1])

"""The contract every estimator follows, checked once for all of them.

An estimator joins by one line: add it to ``fedclust.algorithms.ESTIMATORS`` (and, if its
defaults do not suit the small data below, give its parameters in ``PARAMS``). The
``ToyLloyd`` estimator defined here is not in the library: it shows that a new estimator,
written against ``FederatedClusteringMixin``, inherits every check.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone, is_clusterer
from sklearn.exceptions import NotFittedError

from fedclust import DistributedCoreset
from fedclust.algorithms import ESTIMATORS, FederatedClusteringMixin
from fedclust.communication import SERVER, Communication
from fedclust.lloyd import lloyd
from fedclust.metrics import clustering_accuracy, kmedian_cost
from fedclust.rounds import HISTORY_COLUMNS, History
from fedclust.seeding import kmeans_plusplus


class ToyLloyd(FederatedClusteringMixin):
    """Lloyd's algorithm on the pooled data from k-means++ (a stand-in new estimator).

    Every device uploads all its rows once (kind ``rows``). Its parameters are the mixin's
    (``n_clusters``, ``random_state``), validated by the mixin's constraints.
    """

    def __init__(self, n_clusters=3, *, random_state=None):
        self.n_clusters = n_clusters
        self.random_state = random_state

    def _fit(self, federation, rng, comm, callback):
        init, _ = kmeans_plusplus(federation.X, self.n_clusters,
                                  sample_weight=federation.weights, random_state=rng)
        result = lloyd(federation.X, init, weights=federation.weights)
        comm.send("rows", np.arange(federation.n_devices), SERVER,
                  floats=federation.device_sizes * federation.n_features)
        comm.add_rounds(1)
        self.cluster_centers_ = result.centers
        self.labels_ = federation.to_original_order(result.labels)
        self.n_iter_ = result.n_iter


ALL = [*ESTIMATORS, ToyLloyd]
# parameters for the small data below (k = 3 clusters, each device sees one or two)
PARAMS = {"KFed": {"device_clusters": 2}, "LocalKMeans": {"local_steps": 2, "n_iter": 6}}


def make(cls, **overrides):
    params = {"n_clusters": 3, "random_state": 0, **PARAMS.get(cls.__name__, {}), **overrides}
    return cls(**params)


def blobs(seed=0, per_cluster=40):
    """Three far-apart blobs in R^4, rows shuffled, each of 6 devices holding 2 of them
    (k-FED's setting: every device holds k' = 2 clusters)."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0, 0, 0], [30, 0, 0, 0], [0, 30, 0, 0]])
    labels = np.repeat(np.arange(3), per_cluster)
    holders = {0: (0, 1, 4, 5), 1: (0, 1, 2, 3), 2: (2, 3, 4, 5)}
    devices = np.concatenate([np.array(holders[c])[np.arange(per_cluster) % 4]
                              for c in range(3)])
    X = centers[labels] + rng.standard_normal((len(labels), 4))
    order = rng.permutation(len(labels))
    return X[order], labels[order], devices[order]


def independent_cost(X, centers, labels, weights=None):
    w = np.ones(len(X)) if weights is None else weights
    return float(sum(w[i] * np.sum((X[i] - centers[labels[i]]) ** 2) for i in range(len(X))))


@pytest.fixture(params=ALL, ids=lambda cls: cls.__name__)
def estimator_class(request):
    return request.param


def test_is_a_scikit_learn_clusterer_with_nothing_set_in_init(estimator_class):
    est = make(estimator_class)
    assert is_clusterer(est)
    # __init__ stores its arguments and nothing else
    assert set(vars(est)) == set(est.get_params(deep=False))
    signature = inspect.signature(estimator_class.__init__)
    assert set(est.get_params()) == set(signature.parameters) - {"self"}
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin is not est
    with pytest.raises(NotFittedError):
        est.predict(np.zeros((2, 4)))


def test_fit_sets_the_shared_fitted_attributes(estimator_class):
    X, y, devices = blobs()
    est = make(estimator_class)
    assert est.fit(X, devices=devices) is est
    assert est.n_features_in_ == 4
    assert est.cluster_centers_.shape == (3, 4)
    assert est.labels_.shape == (len(X),)
    # labels in the input order: the shuffled rows are clustered exactly
    assert clustering_accuracy(y, est.labels_) == 1.0
    assert est.inertia_ == pytest.approx(independent_cost(X, est.cluster_centers_, est.labels_))
    assert isinstance(est.n_iter_, (int, np.integer)) and est.n_iter_ >= 1
    assert np.array_equal(est.fit_predict(X, devices=devices), est.labels_)
    assert est.score(X) == pytest.approx(-independent_cost(X, est.cluster_centers_,
                                                           est.predict(X)))


def test_labels_equal_predict_or_the_exception_is_documented(estimator_class):
    X, _, devices = blobs(1)
    est = make(estimator_class).fit(X, devices=devices)
    # on well-separated data every estimator's labels are the nearest centers
    assert np.array_equal(est.labels_, est.predict(X))
    if not estimator_class._labels_are_nearest_center:
        doc = inspect.getdoc(estimator_class)
        assert "documented exception" in doc and "predict(X)" in doc
    # score is the cost at the nearest centers: -inertia_ where labels_ are those, at least
    # -inertia_ otherwise (overlapping data: the induced labels need not be nearest)
    noisy = X + np.random.default_rng(1).normal(0, 12, X.shape)
    est = make(estimator_class).fit(noisy, devices=devices)
    if estimator_class._labels_are_nearest_center:
        assert est.score(noisy) == pytest.approx(-est.inertia_, rel=1e-10)
    else:
        assert est.score(noisy) >= -est.inertia_ * (1 + 1e-12)


def test_communication_ledger(estimator_class):
    X, _, devices = blobs(2)
    comm = make(estimator_class).fit(X, devices=devices).communication_
    assert isinstance(comm, Communication)
    for key in ("rounds", "floats_up", "floats_down", "ints_up", "bytes_up", "messages_up"):
        assert key in comm and comm[key] >= 0
    assert comm["rounds"] >= 1 and comm["floats_up"] > 0
    # the per-kind totals add up to the star summaries
    kinds = comm.by_kind()
    for direction in ("up", "down"):
        part = kinds[kinds.direction == direction]
        assert part.floats.sum() == comm[f"floats_{direction}"]
        assert part.ints.sum() == comm[f"ints_{direction}"]
        assert part.bytes.sum() == comm[f"bytes_{direction}"]
    assert comm["bytes_up"] == 8 * comm["floats_up"] + 8 * comm["ints_up"]


def test_int_seed_is_reproducible_and_a_generator_is_not_consumed(estimator_class):
    X, _, devices = blobs(3, per_cluster=25)
    X = X + np.random.default_rng(0).normal(0, 10, X.shape)  # overlapping: seeds matter
    a = make(estimator_class, random_state=5).fit(X, devices=devices)
    b = make(estimator_class, random_state=5).fit(X, devices=devices)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert dict(a.communication_) == dict(b.communication_)
    gen = np.random.default_rng(7)
    state = gen.bit_generator.state
    c = make(estimator_class, random_state=gen).fit(X, devices=devices)
    assert gen.bit_generator.state == state
    d = make(estimator_class, random_state=gen).fit(X, devices=devices)
    np.testing.assert_array_equal(c.cluster_centers_, d.cluster_centers_)
    # scikit-learn's legacy RandomState: accepted, and not consumed either
    legacy = np.random.RandomState(7)
    before = legacy.get_state()[1].copy()
    e = make(estimator_class, random_state=legacy).fit(X, devices=devices)
    f = make(estimator_class, random_state=legacy).fit(X, devices=devices)
    np.testing.assert_array_equal(legacy.get_state()[1], before)
    np.testing.assert_array_equal(e.cluster_centers_, f.cluster_centers_)


def test_sample_weight_equals_repeated_rows(estimator_class):
    X, _, devices = blobs(4, per_cluster=20)
    weights = np.random.default_rng(1).integers(1, 4, size=len(X))
    repeated = make(estimator_class).fit(np.repeat(X, weights, axis=0),
                                         devices=np.repeat(devices, weights),
                                         sample_weight=np.ones(weights.sum()))
    weighted = make(estimator_class).fit(X, devices=devices, sample_weight=weights)
    np.testing.assert_allclose(weighted.cluster_centers_, repeated.cluster_centers_,
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(np.repeat(weighted.labels_, weights), repeated.labels_)
    assert weighted.inertia_ == pytest.approx(repeated.inertia_)


#: Every seeding by name of the estimators that take ``init`` (others: None).
STRING_INITS = {"DistributedLloyd": ["k-means++", "greedy-k-means++", "random"],
                "LocalKMeans": ["k-means++", "greedy-k-means++", "random"],
                "FederatedKMeans": ["greedy-k-means++", "k-means++", "random", "uniform"]}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_unit_sample_weights_fit_as_no_weights(cls):
    """The sample-weight contract: ``sample_weight=None`` and ``np.ones(n)`` fit the same
    model (centres, labels, inertia) from the same seed, with every seeding by name; on
    overlapping clusters and random devices, where a different draw would land elsewhere."""
    rng = np.random.default_rng(11)
    centers = rng.normal(0.0, 4.0, (6, 5))
    truth = rng.integers(0, 6, 600)
    X = centers[truth] + rng.normal(0.0, 1.5, (600, 5))
    devices = rng.integers(0, 12, 600)
    for init in STRING_INITS.get(cls.__name__, [None]):
        params = {"n_clusters": 6, **PARAMS.get(cls.__name__, {}),
                  **({} if init is None else {"init": init})}
        for seed in (0, 1, 2):
            plain = cls(random_state=seed, **params).fit(X, devices=devices)
            ones = cls(random_state=seed, **params).fit(X, devices=devices,
                                                        sample_weight=np.ones(600))
            np.testing.assert_allclose(ones.cluster_centers_, plain.cluster_centers_,
                                       rtol=1e-12, atol=1e-12, err_msg=f"init={init}")
            np.testing.assert_array_equal(ones.labels_, plain.labels_, err_msg=f"init={init}")
            assert ones.inertia_ == pytest.approx(plain.inertia_, rel=1e-12, abs=1e-12)


def test_errors_name_the_argument(estimator_class):
    """Bad input is refused in scikit-learn's words where scikit-learn has them (its own
    checks, and its users, expect them), in ours for what is federated."""
    from sklearn.exceptions import ConvergenceWarning

    X, _, devices = blobs(5, per_cluster=5)
    est = make(estimator_class)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        est.fit(bad, devices=devices)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        est.fit(bad, devices=devices)
    with pytest.raises(ValueError, match="Complex data not supported"):
        est.fit(X + 1j, devices=devices)
    with pytest.raises(TypeError, match="Sparse data was passed .* but dense data is required"):
        est.fit(scipy.sparse.csr_matrix(X), devices=devices)
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array instead"):
        est.fit(X[:, 0], devices=devices)
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
        est.fit(X[:0], devices=devices[:0])
    with pytest.raises(ValueError, match="devices must be a 1-D array with one device id"):
        est.fit(X, devices=devices[:-1])
    with pytest.raises(ValueError, match=r"n_clusters=.* exceeds the number of samples \(2\)"):
        make(estimator_class).fit(X[:2], devices=devices[:2])
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(3,\), expected"):
        est.fit(X, devices=devices, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="Sample weights must contain at least one non-zero"):
        est.fit(X, devices=devices, sample_weight=np.zeros(len(X)))
    if not estimator_class._allows_negative_weights:
        with pytest.raises(ValueError, match="Negative values in data passed to"):
            est.fit(X, devices=devices, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 4 features"):
        est.fit(X, devices=devices).predict(X[:, :3])
    # an object array of numbers is numbers
    as_objects = make(estimator_class).fit(X.astype(object), devices=devices)
    np.testing.assert_array_equal(as_objects.cluster_centers_,
                                  make(estimator_class).fit(X, devices=devices).cluster_centers_)
    # fewer distinct points than clusters: as scikit-learn's KMeans, a warning and a model
    two = np.where(np.arange(len(X))[:, None] % 2, 1.0, -1.0) * np.ones_like(X)
    with pytest.warns(ConvergenceWarning, match=r"Number of distinct clusters \(2\) found"):
        fitted = make(estimator_class).fit(two, devices=devices)
    centers, labels = fitted.cluster_centers_, fitted.labels_
    assert centers.shape == (3, X.shape[1]) and np.isfinite(centers).all()
    assert fitted.inertia_ == pytest.approx(independent_cost(two, centers, labels))
    with pytest.raises(ValueError, match=r"X holds values up to 1e\+300, too large"):
        est.fit(np.vstack([X[:-1], np.full((1, X.shape[1]), 1e300)]), devices=devices)


def test_check_params_refuses_what_fit_refuses_before_any_data(estimator_class):
    """The step API's check (a server that never calls ``fit``) raises fit's own error for a
    parameter outside its constraint, and passes a setting that fits."""
    X, _, devices = blobs(5, per_cluster=5)
    for bad in (make(estimator_class, n_clusters=0), make(estimator_class, random_state=-1)):
        with pytest.raises(ValueError) as by_fit:
            bad.fit(X, devices=devices)
        with pytest.raises(type(by_fit.value), match=re.escape(str(by_fit.value))):
            bad.check_params()
    make(estimator_class).check_params()


def test_rounds_are_reported_to_a_callback_or_refused(estimator_class):
    X, _, devices = blobs(6)
    history = History(metrics={"n_labels": lambda s: len(np.unique(s.labels))})
    est = make(estimator_class)
    if not estimator_class._reports_rounds:
        with pytest.raises(TypeError, match="callback must be None"):
            est.fit(X, devices=devices, callback=history)
        return
    est.fit(X, devices=devices, callback=history)
    frame = history.to_frame()
    assert frame["round"].tolist() == list(range(len(frame)))
    assert frame["round"].iloc[0] == 0 and len(frame) >= 2
    # the last round's objective is the cost of the last labels under the devices' centers
    assert frame["n_labels"].iloc[-1] == 3


def test_round_history_has_one_shape(estimator_class):
    """Every multi-round estimator's ``history_``: rows t = 1..T with the shared columns first,
    agreeing with what a callback saw; a one-shot estimator has none (its one exchange is in
    ``communication_``)."""
    X, _, devices = blobs(7)
    history = History()
    est = make(estimator_class)
    if not estimator_class._reports_rounds:
        assert not hasattr(est.fit(X, devices=devices), "history_")
        return
    est.fit(X, devices=devices, callback=history)
    rows = est.history_
    assert tuple(rows)[:3] == HISTORY_COLUMNS
    T = len(rows["round"])
    assert T >= 1 and rows["round"].tolist() == list(range(1, T + 1))
    assert all(len(column) == T for column in rows.values())
    assert rows["aggregated"].dtype == bool and rows["participants"].dtype == np.int64
    # a round that aggregates heard from at least one device; a local-only round from none
    assert (rows["participants"][rows["aggregated"]] >= 1).all()
    assert (rows["participants"][~rows["aggregated"]] == 0).all()
    # the callback's rounds after the initialization say the same about aggregation
    seen = history.to_frame().query("round >= 1")
    n = min(T, len(seen))
    assert seen["aggregated"].tolist()[:n] == rows["aggregated"].tolist()[:n]
    # every aggregation is a communication round the ledger counts
    assert rows["aggregated"].sum() <= est.communication_["rounds"]


class ToyMedianCost(ToyLloyd):
    """ToyLloyd reporting the k-median cost: the one hook an estimator of another objective
    overrides."""

    def _cost(self, X, centers, labels=None, sample_weight=None):
        return kmedian_cost(X, centers, labels, sample_weight)


def independent_kmedian_cost(X, centers, labels, weights=None):
    w = np.ones(len(X)) if weights is None else weights
    return float(sum(w[i] * np.linalg.norm(X[i] - centers[labels[i]]) for i in range(len(X))))


@pytest.mark.parametrize("make_kmedian", [
    lambda: ToyMedianCost(3, random_state=0),
    lambda: DistributedCoreset(3, coreset_size=60, objective="kmedian", random_state=0),
], ids=["ToyMedianCost", "DistributedCoreset"])
def test_inertia_and_score_follow_the_estimators_cost(make_kmedian):
    X, _, devices = blobs(7)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(X))
    est = make_kmedian().fit(X, devices=devices, sample_weight=w)
    assert est.inertia_ == pytest.approx(
        independent_kmedian_cost(X, est.cluster_centers_, est.labels_, w), rel=1e-10)
    assert est.score(X) == pytest.approx(
        -independent_kmedian_cost(X, est.cluster_centers_, est.predict(X)), rel=1e-10)
    assert est.score(X, sample_weight=w) == pytest.approx(-est.inertia_, rel=1e-10)


# ------------------------------------------------ scikit-learn composition: y and devices


@pytest.mark.parametrize("estimator_class", ALL)
def test_a_pipeline_never_reads_class_labels_as_devices(estimator_class):
    """``Pipeline.fit(X, y)`` passes class labels as ``y``: ignored, as by ``KMeans``; with
    no ``devices`` one device holds every row (k-FED: its k' = 3 local clusters suffice)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, labels, _ = blobs()
    params = {"device_clusters": 3} if estimator_class.__name__ == "KFed" else {}
    pipe = make_pipeline(StandardScaler(), make(estimator_class, **params)).fit(X, labels)
    fitted = pipe[-1]
    assert set(fitted.communication_.by_edge().sender) - {SERVER} <= {0}
    alone = make(estimator_class, **params).fit(StandardScaler().fit_transform(X))
    np.testing.assert_array_equal(fitted.cluster_centers_, alone.cluster_centers_)
    np.testing.assert_array_equal(pipe.predict(X), alone.labels_)


@pytest.mark.parametrize("estimator_class", ALL)
def test_a_fit_without_devices_says_it_is_centralized_and_names_devices(estimator_class):
    """``fit(X, devices)`` passes the devices as ``y`` (ignored): warned, naming
    ``devices=``; with ``devices`` given, no such warning."""
    import warnings

    from fedclust.exceptions import DevicesWarning

    X, _, devices = blobs()
    # one device: k-FED needs its k' local clusters to cover the 3
    alone = {"device_clusters": 3} if estimator_class.__name__ == "KFed" else {}
    with pytest.warns(DevicesWarning, match=r"y is ignored .* fit\(X, devices=\.\.\.\)"):
        make(estimator_class, **alone).fit(X, devices)
    with pytest.warns(DevicesWarning, match="every row is one device"):
        make(estimator_class, **alone).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DevicesWarning)
        make(estimator_class).fit(X, devices=devices)


@pytest.mark.parametrize("estimator_class", ALL)
def test_transform_gives_distances_to_the_centers_as_kmeans_does(estimator_class):
    """``transform`` is the cluster-distance space; ``fit_transform`` fits on the devices;
    the output features are named after the estimator and ``set_output`` gives a frame."""
    X, _, devices = blobs()
    est = make(estimator_class).fit(X, devices=devices)
    distances = est.transform(X)
    expected = np.sqrt(((X[:, None, :] - est.cluster_centers_[None]) ** 2).sum(-1))
    np.testing.assert_allclose(distances, expected, rtol=1e-10, atol=1e-8)
    np.testing.assert_array_equal(distances.argmin(axis=1), est.predict(X))
    np.testing.assert_allclose(make(estimator_class).fit_transform(X, devices=devices),
                               distances)
    name = estimator_class.__name__.lower()
    assert est.get_feature_names_out().tolist() == [f"{name}{i}" for i in range(3)]
    frame = make(estimator_class).set_output(transform="pandas").fit_transform(
        X, devices=devices)
    assert list(frame.columns) == [f"{name}{i}" for i in range(3)]


@pytest.mark.parametrize("estimator_class", ALL)
def test_grid_search_routes_devices_to_every_fit(estimator_class):
    """With metadata routing on and ``set_fit_request(devices=True)``, ``GridSearchCV`` over a
    pipeline fits every candidate (and the refit) on the rows' devices."""
    import sklearn
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, _, devices = blobs()
    name = estimator_class.__name__.lower()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(),
                             make(estimator_class).set_fit_request(devices=True))
        search = GridSearchCV(pipe, {f"{name}__random_state": [0, 1]}, cv=2)
        search.fit(X, devices=devices)
    best = search.best_estimator_[-1]
    assert set(best.communication_.by_edge().sender) - {SERVER} == set(np.unique(devices))
    direct = clone(best).fit(StandardScaler().fit_transform(X), devices=devices)
    np.testing.assert_array_equal(best.cluster_centers_, direct.cluster_centers_)
    with pytest.raises(TypeError, match="positional"):
        make(estimator_class).fit(X, None, devices)


@pytest.mark.parametrize("estimator_class", ALL)
def test_a_routed_pipeline_fit_predicts_on_the_devices_with_one_request(estimator_class):
    """With metadata routing on, ``set_fit_request(devices=True)`` alone lets a pipeline's
    ``fit_predict`` (and ``fit_transform``) route the devices to the fit: its labels are the
    fit's ``labels_`` on those devices (k-FED's induced clustering)."""
    import sklearn
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, _, devices = blobs()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(),
                             make(estimator_class).set_fit_request(devices=True))
        labels = pipe.fit_predict(X, devices=devices)
        distances = clone(pipe).fit_transform(X, devices=devices)
    direct = make(estimator_class).fit(StandardScaler().fit_transform(X), devices=devices)
    np.testing.assert_array_equal(labels, direct.labels_)
    np.testing.assert_allclose(distances, direct.transform(StandardScaler().fit_transform(X)))


@pytest.mark.parametrize("estimator_class",
                         [e for e in ALL if getattr(e, "_reports_rounds", False)])
def test_threadpool_limits_limit_the_kernels_threads(estimator_class):
    """``threadpoolctl.threadpool_limits(1)`` limits numba's kernels as it limits BLAS: a
    fit under it sees one numba thread (checked in its round callback), and the count comes
    back after."""
    import numba
    from threadpoolctl import threadpool_info, threadpool_limits

    assert "numba" in {info["user_api"] for info in threadpool_info()}
    X, _, devices = blobs()
    seen = []
    before = numba.get_num_threads()
    with threadpool_limits(limits=1):
        make(estimator_class).fit(X, devices=devices,
                                  callback=lambda state: seen.append(numba.get_num_threads()))
    assert seen and set(seen) == {1}
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("estimator_class", ALL)
def test_string_and_negative_device_ids_fit_as_their_integer_positions(estimator_class):
    """Clients named by strings, or by negative integers, fit the same model as the same
    devices numbered 0..Z-1 in the order of their sorted ids; the ledger names a device by
    that position (no device is taken for the server, -1)."""
    X, _, devices = blobs()
    names = np.array([f"client-{z:02d}" for z in range(devices.max() + 1)])[devices]
    negative = devices - devices.max() - 1  # -Z..-1: the last device's id is the server's
    base = make(estimator_class).fit(X, devices=devices)
    for ids in (names, names.astype(object), negative):
        est = make(estimator_class).fit(X, devices=ids)
        np.testing.assert_array_equal(est.cluster_centers_, base.cluster_centers_)
        np.testing.assert_array_equal(est.labels_, base.labels_)
        assert est.communication_.summary() == base.communication_.summary()
        assert est.communication_.by_edge().equals(base.communication_.by_edge())
    with pytest.raises(ValueError, match="ids of one sortable type"):
        make(estimator_class).fit(X, devices=np.array([1, "a"] * (len(X) // 2), dtype=object))

"""The estimators' defaults at KMeans quality (issue 43): seeding, ``tol``, ``converged_``,
``ConvergenceWarning``, k-FED's ``device_clusters="auto"``, and the paper's settings still
reachable."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.cluster._kmeans import _tolerance
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from fedclust import DistributedCoreset, DistributedLloyd, FederatedKMeans, KFed, LocalKMeans
from fedclust.lloyd import lloyd, tolerance
from fedclust.metrics import kmeans_cost
from fedclust.partitions import iid_partition, structured_partition

ROUNDS_ESTIMATORS = [DistributedLloyd, LocalKMeans, FederatedKMeans]


def blobs(seed=0, n=2000, k=8, d=6, std=1.0):
    X, y = make_blobs(n_samples=n, n_features=d, centers=k, cluster_std=std,
                      random_state=seed)
    return X, y


def kmeans_mean_cost(X, k, seeds):
    return np.mean([KMeans(k, random_state=s).fit(X).inertia_ for s in seeds])


# ------------------------------------------------------------------ the kernel's tol
def test_tolerance_is_scikit_learns_unweighted_and_weights_count_as_repeats():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * [1.0, 5.0, 0.2]
    assert tolerance(X, 1e-4) == pytest.approx(_tolerance(X, 1e-4), rel=1e-12)
    assert tolerance(X, 0) == 0.0
    w = rng.integers(1, 4, len(X))
    assert tolerance(X, 1e-3, w) == pytest.approx(tolerance(np.repeat(X, w, axis=0), 1e-3))


def test_lloyd_with_tol_stops_where_scikit_learn_stops():
    # a start far from the fixed point: many small late steps that tol cuts off
    X, _ = blobs(seed=3, k=6, std=3.0)
    init = X[:6].copy()
    tol = 1e-2
    ours = lloyd(X, init, tol=tolerance(X, tol))
    theirs = KMeans(6, init=init, n_init=1, tol=tol, algorithm="lloyd").fit(X)
    strict = lloyd(X, init)
    assert ours.by_shift and ours.converged
    assert ours.n_iter == theirs.n_iter_ < strict.n_iter
    np.testing.assert_allclose(ours.centers, theirs.cluster_centers_, rtol=1e-10)
    np.testing.assert_array_equal(ours.labels, theirs.labels_)  # the returned centers' labels


def test_lloyd_tol_zero_is_the_strict_test():
    X, _ = blobs(seed=3, k=6, std=3.0)
    strict = lloyd(X, X[:6])
    assert not strict.by_shift
    for algorithm in ("lloyd", "elkan"):
        loose = lloyd(X, X[:6], tol=1e9, algorithm=algorithm)  # any shift is small enough
        assert loose.converged and loose.n_iter == 1


# ------------------------------------------------------------------ estimators
@pytest.mark.parametrize("Estimator", ROUNDS_ESTIMATORS)
def test_defaults_seed_greedily_and_stop_by_tol(Estimator):
    X, _ = blobs(seed=1)
    devices = np.arange(len(X)) % 10
    est = Estimator(8, random_state=0)
    assert est.init == "greedy-k-means++" and est.tol == 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, devices=devices)
    assert est.converged_
    # the tolerance needs every device's row count, feature sums and sum of squared norms
    assert est.communication_.total("data_moments") == 10 * (X.shape[1] + 2)
    rounds = est.communication_["lloyd_rounds"] if Estimator is DistributedLloyd else \
        est.n_iter_
    assert len(est.history_["round"]) == rounds


@pytest.mark.parametrize("Estimator, cap", [(DistributedLloyd, {"max_iter": 1}),
                                            (LocalKMeans, {"max_iter": 1}),
                                            (FederatedKMeans, {"n_rounds": 1})])
def test_reaching_the_cap_warns_and_is_not_converged(Estimator, cap):
    X, _ = blobs(seed=2, std=3.0)
    name = next(iter(cap))
    with pytest.warns(ConvergenceWarning, match=f"{Estimator.__name__} stopped at {name}=1"):
        est = Estimator(8, init=X[:8], random_state=0, **cap).fit(
            X, devices=np.arange(len(X)) % 4)
    assert not est.converged_ and est.n_iter_ == 1


def test_the_papers_fixed_budgets_run_in_full_without_a_warning():
    X, _ = blobs(seed=2, std=3.0)
    devices = np.arange(len(X)) % 4
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        local = LocalKMeans(8, 2, n_iter=7, random_state=0).fit(X, devices=devices)
        fed = FederatedKMeans(8, n_rounds=9, tol=None, random_state=0).fit(X, devices=devices)
    assert local.n_iter_ == 7 and len(local.history_["round"]) == 7
    assert fed.n_iter_ == 9 and not fed.converged_
    assert local.communication_.total("data_moments") == 0
    assert fed.communication_.total("data_moments") == 0


def test_local_kmeans_until_converged_is_distributed_lloyd():
    # one local step: the aggregate is the pooled mean, so both run Lloyd's iterations
    X, _ = blobs(seed=4, std=2.0)
    devices = np.arange(len(X)) % 5
    init = X[:8].copy()
    local = LocalKMeans(8, 1, init=init).fit(X, devices=devices)
    pooled = DistributedLloyd(8, init=init).fit(X, devices=devices)
    np.testing.assert_allclose(local.cluster_centers_, pooled.cluster_centers_, rtol=1e-9)
    assert local.converged_ and pooled.converged_


def test_local_kmeans_without_aggregation_stops_when_no_machine_moves():
    X, _ = blobs(seed=4, std=2.0)
    est = LocalKMeans(8, None, tol=0, random_state=0).fit(X, devices=np.arange(len(X)) % 3)
    assert est.converged_ and not est.history_["aggregated"].any()
    assert est.n_iter_ < 300


def test_distributed_lloyd_rounds_when_tol_stops_it():
    # stopped by the shift, the server knows at the update: n_iter rounds and a last
    # broadcast of the centers (the devices' labels are those of the final centers)
    X, _ = blobs(seed=3, k=6, std=3.0)
    devices = np.arange(len(X)) % 4
    Z, k, d = 4, 6, X.shape[1]
    est = DistributedLloyd(6, init=X[:6], tol=1e-2).fit(X, devices=devices)
    assert est.converged_ and est.n_iter_ < DistributedLloyd(6, init=X[:6], tol=0).fit(
        X, devices=devices).n_iter_
    assert est.communication_["lloyd_rounds"] == est.n_iter_
    assert est.communication_.total("centers") == (est.n_iter_ + 1) * Z * k * d


def test_coreset_solve_reports_convergence():
    X, _ = blobs(seed=5, std=4.0)
    devices = np.arange(len(X)) % 4
    est = DistributedCoreset(8, 400, random_state=0).fit(X, devices=devices)
    assert est.converged_ and est.n_iter_ < 300
    with pytest.warns(ConvergenceWarning, match="DistributedCoreset stopped at max_iter=1"):
        capped = DistributedCoreset(8, 400, max_iter=1, tol=0, refine_max_iter=0,
                                    random_state=0).fit(X, devices=devices)
    assert not capped.converged_


def test_kfed_auto_sends_k_centers_and_never_collapses():
    # more devices than clusters: the old "auto" (ceil(k / Z) = 1) sent each device's mean
    X, y = blobs(seed=6, n=3000, k=6)
    k, seeds = 6, range(3)
    reference = kmeans_mean_cost(X, k, seeds)
    for devices in (iid_partition(len(X), 20, random_state=0),
                    structured_partition(y, 2, 4, random_state=0)):
        costs = []
        for seed in seeds:
            # one-shot, so that the refinement's Lloyd rounds cannot hide a collapse
            est = KFed(k, refine_max_iter=0, random_state=seed).fit(X, devices=devices)
            assert (est.device_clusters_ == k).all() and est.converged_
            costs.append(kmeans_cost(X, est.cluster_centers_))
        assert np.mean(costs) <= 1.05 * reference
        # the paper's k' = 1 would merge every device's clusters
        one = KFed(k, 1, refine_max_iter=0, random_state=0).fit(X, devices=devices)
        assert kmeans_cost(X, one.cluster_centers_) > 1.5 * reference


def test_kfed_warns_when_devices_do_not_converge():
    X, _ = blobs(seed=7, std=4.0)
    with pytest.warns(ConvergenceWarning, match="KFed stopped at local_max_iter=1"):
        est = KFed(8, 8, local_max_iter=1, random_state=0).fit(
            X, devices=np.arange(len(X)) % 4)
    assert not est.converged_


def test_kfed_auto_server_is_weighted_kmeans_of_the_local_centers():
    X, y = blobs(seed=8, n=1600, k=8)
    devices = structured_partition(y, 2, 4, random_state=0)
    est = KFed(8, random_state=0).fit(X, devices=devices)
    assert est.server_start_device_ is None
    # a fixed point of weighted Lloyd on the local centers, from the kept seeds
    again = lloyd(est.local_centers_, est.server_init_, weights=est.local_center_sizes_)
    np.testing.assert_allclose(est.cluster_centers_, again.centers, rtol=1e-10)
    np.testing.assert_array_equal(est.local_center_labels_, again.labels)
    # Algorithm 2's farthest-point start from one device's k centers stays on its clusters
    printed_start = KFed(8, 8, random_state=0).fit(X, devices=devices)
    assert kmeans_cost(X, est.cluster_centers_) < 0.5 * kmeans_cost(
        X, printed_start.cluster_centers_)


def test_coreset_solve_seeds_greedily_and_draws_no_row_of_weight_at_most_zero():
    from fedclust.centralized import best_kmeans

    # anisotropic blobs, k = 12: the greedy seeding (the default) beats plain k-means++ on the
    # coreset, on the same seeds (0.92 against 1.01 times KMeans()'s cost when written)
    X, _ = make_blobs(n_samples=6000, n_features=12, centers=12, random_state=3)
    X = X @ np.random.default_rng(3).normal(size=(12, 12))
    devices = np.arange(len(X)) % 12
    seeds = range(3)

    def cost(init):
        return np.mean([kmeans_cost(X, DistributedCoreset(12, init=init, random_state=s).fit(
            X, devices=devices).cluster_centers_) for s in seeds])

    greedy = cost("auto")
    assert greedy <= 1.05 * kmeans_mean_cost(X, 12, seeds)
    assert greedy <= 0.95 * cost("k-means++")
    # a far row of negative weight is never a seed (it counts as weight 0 in the seeding)
    points = np.r_[np.zeros((5, 2)), np.full((5, 2), 4.0), [[100.0, 100.0]]]
    weights = np.r_[np.ones(10), -0.5]
    result = best_kmeans(points, 2, seeds=[0, 1, 2], sample_weight=weights, seeding="greedy")
    assert not np.any(np.all(result.centers == 100.0, axis=1))


# ------------------------------------------------------------------ one-shot, then Lloyd
def one_shot_and_refined(make, X, devices):
    """The one-shot fit, the default fit and DistributedLloyd from the one-shot centers."""
    one = make(refine_max_iter=0).fit(X, devices=devices)
    refined = make().fit(X, devices=devices)
    lloyd_ = DistributedLloyd(len(one.cluster_centers_), init=one.cluster_centers_,
                              tol=1e-4).fit(X, devices=devices)
    return one, refined, lloyd_


@pytest.mark.parametrize("make", [
    lambda **kw: KFed(5, random_state=1, **kw),
    lambda **kw: DistributedCoreset(5, 300, random_state=1, **kw),
], ids=["KFed", "DistributedCoreset"])
def test_refinement_is_distributed_lloyd_from_the_one_shot_centers(make):
    X, _ = blobs(seed=8, n=1500, k=5, std=3.5)
    devices = np.arange(len(X)) % 6
    one, refined, lloyd_ = one_shot_and_refined(make, X, devices)
    # the same centers, labels and updates as the multi-round estimator from that start
    np.testing.assert_array_equal(refined.cluster_centers_, lloyd_.cluster_centers_)
    np.testing.assert_array_equal(refined.labels_, lloyd_.labels_)
    np.testing.assert_array_equal(refined.labels_, refined.predict(X))
    assert refined.n_iter_refine_ == lloyd_.n_iter_ >= 1 and one.n_iter_refine_ == 0
    assert refined.inertia_ <= one.inertia_
    # its rounds and messages are DistributedLloyd's, on top of the one-shot exchange
    comm, one_comm, lloyd_comm = (e.communication_ for e in (refined, one, lloyd_))
    assert comm["refine_rounds"] == lloyd_comm["lloyd_rounds"]
    assert comm["rounds"] == one_comm["rounds"] + lloyd_comm["lloyd_rounds"]
    for kind in ("centers", "cluster_sums", "cluster_counts", "data_moments"):
        assert comm.total(kind) == lloyd_comm.total(kind), kind
    assert "refine_rounds" not in one_comm


def test_refinement_cap_warns_and_is_not_converged():
    X, _ = blobs(seed=8, n=1500, k=5, std=3.5)
    devices = np.arange(len(X)) % 6
    with pytest.warns(ConvergenceWarning, match="KFed's refinement stopped at refine_max_iter=1"):
        est = KFed(5, refine_max_iter=1, tol=0, random_state=1).fit(X, devices=devices)
    assert not est.converged_ and est.n_iter_refine_ == 1
    with pytest.warns(ConvergenceWarning, match="refinement stopped at refine_max_iter=1"):
        DistributedCoreset(5, 300, refine_max_iter=1, tol=0, random_state=1).fit(
            X, devices=devices)


def test_coreset_refines_only_through_a_server_and_for_kmeans():
    from fedclust.topology import Topology

    X, _ = blobs(seed=8, n=900, k=4)
    devices = np.arange(len(X)) % 9
    grid = DistributedCoreset(4, 200, topology=Topology.grid(3), random_state=0).fit(
        X, devices=devices)
    kmedian = DistributedCoreset(4, 200, objective="kmedian", random_state=0).fit(
        X, devices=devices)
    assert grid.n_iter_refine_ == kmedian.n_iter_refine_ == 0
    with pytest.raises(ValueError, match="refine_max_iter=5 needs topology=None .* no server"):
        DistributedCoreset(4, 200, topology=Topology.grid(3), refine_max_iter=5).fit(
            X, devices=devices)
    with pytest.raises(ValueError, match="refine_max_iter=5 needs .* k-means cost"):
        DistributedCoreset(4, 200, objective="kmedian", refine_max_iter=5).fit(
            X, devices=devices)

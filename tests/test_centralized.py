import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.cluster import kmeans_plusplus as sklearn_kmeans_plusplus

from fedclust.centralized import best_kmeans, reference_kmeans
from fedclust.metrics import kmeans_cost
from fedclust.seeds import seed_for

from .conftest import make_blobs


def test_reference_kmeans_keeps_the_best_restart(rng):
    X, _, _ = make_blobs(rng, n_clusters=5, spread=3.0)
    restarts = [reference_kmeans(X, 5, seed=1, n_init=1)]
    # restart r is seeded seed_for(seed, "restart=r") whatever n_init is: n_init=6 keeps the
    # lowest of the six single restarts
    restarts += [best_kmeans(X, 5, [seed_for(1, f"restart={r}")], seeding="greedy")
                 for r in range(1, 6)]
    best = reference_kmeans(X, 5, seed=1, n_init=6)
    assert best.inertia == min(r.inertia for r in restarts)
    assert best.inertia == pytest.approx(kmeans_cost(X, best.centers))
    assert len({round(r.inertia, 6) for r in restarts}) > 1  # the restarts differ


def test_greedy_seeding_then_lloyd_matches_scikit_learn(rng):
    X, _, _ = make_blobs(rng, n_clusters=6, spread=2.0)
    ours = best_kmeans(X, 6, [7], seeding="greedy")
    init, _ = sklearn_kmeans_plusplus(X, 6, random_state=7)  # the same draw, independently
    theirs = KMeans(6, init=init, n_init=1, tol=0.0, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(ours.centers, theirs.cluster_centers_, atol=1e-9)
    assert ours.inertia == pytest.approx(theirs.inertia_, rel=1e-9)


def test_greedy_seeding_is_for_kmeans_only(rng):
    X, _, _ = make_blobs(rng, n_clusters=3)
    with pytest.raises(ValueError, match="seeding='greedy'.*objective='kmedian'"):
        best_kmeans(X, 3, [0], objective="kmedian", seeding="greedy")
    with pytest.raises(ValueError, match="seeding"):
        best_kmeans(X, 3, [0], seeding="random")


def test_reference_kmeans_reports_its_restarts_only_when_named(rng, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="fedclust.progress")
    X = rng.normal(size=(200, 3))
    named = reference_kmeans(X, 3, seed=0, n_init=2, desc="oracle k=3")
    assert [r.getMessage().split(" in ")[0] for r in caplog.records] == [
        "oracle k=3: done 2/2 restart (100%)"]
    caplog.clear()
    silent = reference_kmeans(X, 3, seed=0, n_init=2)
    assert caplog.records == [] and silent.inertia == named.inertia

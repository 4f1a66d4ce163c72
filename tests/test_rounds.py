import numpy as np
import pytest

from fedclust.rounds import (
    History,
    RoundState,
    aggregate_centers,
    n_participants,
    sample_participants,
)


@pytest.mark.parametrize("M, C, m", [(50, 0.01, 1), (50, 0.03, 1), (50, 0.1, 5), (50, 1.0, 50),
                                     (100, 0.29, 29), (10, 0.3, 3), (7, 0.5, 3)])
def test_participants_are_floor_of_c_m_and_at_least_one(M, C, m):
    assert n_participants(M, C) == m
    chosen = sample_participants(M, C, np.random.default_rng(0))
    assert len(chosen) == m and len(set(chosen)) == m and np.all(np.diff(chosen) > 0)


def test_participants_are_uniform():
    rng = np.random.default_rng(1)
    counts = np.zeros(10)
    for _ in range(4000):
        counts[sample_participants(10, 0.2, rng)] += 1
    # each device is picked with probability 2/10
    assert np.abs(counts / 4000 - 0.2).max() < 0.03
    with pytest.raises(ValueError, match="fraction must be <= 1"):
        n_participants(10, 1.5)


def test_aggregation_is_the_pooled_mean_and_keeps_unseen_clusters(rng):
    X = rng.normal(size=(30, 2))
    device = np.repeat([0, 1, 2], 10)
    labels = rng.integers(0, 3, size=30)
    labels[labels == 2] = 1  # cluster 2 seen by nobody
    centers = np.zeros((3, 3, 2))
    counts = np.zeros((3, 3))
    for z in range(3):
        for k in range(3):
            rows = (device == z) & (labels == k)
            counts[z, k] = rows.sum()
            if rows.any():
                centers[z, k] = X[rows].mean(axis=0)
    previous = np.full((3, 2), 7.0)
    out, totals = aggregate_centers(centers, counts, previous)
    for k in (0, 1):
        np.testing.assert_allclose(out[k], X[labels == k].mean(axis=0))
    np.testing.assert_array_equal(out[2], [7.0, 7.0])
    assert totals.tolist() == [np.sum(labels == 0), np.sum(labels == 1), 0]


def test_history_records_scalars_metrics_and_labels():
    history = History(metrics={"twice": lambda s: 2 * s.objective}, keep_labels=True)
    order = np.array([2, 0, 1])
    history(RoundState(round=0, centers=np.zeros((1, 1)), aggregated=False, objective=1.5,
                       global_objective=2.0, sorted_labels=np.array([5, 6, 7]), order=order))
    frame = history.to_frame()
    assert frame.to_dict("records") == [{"round": 0, "aggregated": False, "objective": 1.5,
                                         "global_objective": 2.0, "twice": 3.0}]
    # labels come back in the input order: sorted row i is input row order[i]
    assert history.labels[0].tolist() == [6, 7, 5]

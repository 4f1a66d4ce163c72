import numpy as np
import pytest

from fedclust.coreset import (
    equal_shares,
    local_solutions,
    proportional_shares,
    sample_coreset,
)
from fedclust.federation import Federation
from fedclust.metrics import kmeans_cost, kmedian_cost


def federation(rng, sizes=(300, 120, 40, 3), d=3, weights=None):
    devices = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.standard_normal((sum(sizes), d)) * (1 + devices[:, None]) + 5 * devices[:, None]
    return Federation.from_devices(X, devices, sample_weight=weights,
                                   allow_negative_weights=True)


def weighted_cost(points, weights, centers, objective="kmeans"):
    sq = ((points[:, None, :] - centers[None]) ** 2).sum(-1).min(1)
    return float(weights @ (sq if objective == "kmeans" else np.sqrt(sq)))


def test_shares_add_up_and_follow_the_costs():
    # quotas 2.5, 2.5, 5: one point left over, to the first of the tied remainders
    assert proportional_shares(10, np.array([1.0, 1.0, 2.0])).tolist() == [3, 2, 5]
    shares = proportional_shares(1000, np.array([0.0, 3.0, 1.0, 6.0]))
    assert shares.tolist() == [0, 300, 100, 600]
    assert proportional_shares(7, np.array([1.0, 1.0, 1.0])).sum() == 7
    assert proportional_shares(5, np.zeros(3)).tolist() == [0, 0, 0]
    assert equal_shares(10, 4).tolist() == [3, 3, 2, 2]


def test_local_solution_costs_match_an_independent_computation(rng):
    fed = federation(rng)
    local = local_solutions(fed, 4, random_state=0)
    assert local.valid.sum(1).tolist() == [4, 4, 4, 3]  # the 3-point node takes all three
    for z in range(fed.n_devices):
        rows = slice(fed.offsets[z], fed.offsets[z + 1])
        centers = local.centers[z][local.valid[z]]
        assert local.costs[z] == pytest.approx(kmeans_cost(fed.X[rows], centers))
    assert local.costs[3] == pytest.approx(0.0, abs=1e-12)


def test_every_portion_weighs_its_node_and_has_the_asked_size(rng):
    fed = federation(rng)
    local = local_solutions(fed, 4, random_state=0)
    shares = np.array([50, 200, 10, 2])  # node 1 holds 120 <= 200 points: sent as they are
    core = sample_coreset(fed, local, shares, random_state=1)
    portions = core.portion_sizes(fed.n_devices)
    assert portions.tolist() == [50 + 4, 120, 10 + 4, 3]
    assert not core.is_center[core.source == 1].any()
    node_weight = np.bincount(core.source, weights=core.weights, minlength=fed.n_devices)
    np.testing.assert_allclose(node_weight, fed.device_sizes)
    # the 3-point node has cost 0: its centers are its points, weight 1 each
    np.testing.assert_allclose(core.weights[core.source == 3], 1.0)


def test_sampled_weights_are_the_unbiased_ones(rng):
    # w_q = M_i / (t_i m_q): the weighted sum of m over a node's draws is exactly M_i
    fed = federation(rng)
    local = local_solutions(fed, 3, random_state=0)
    shares = np.array([40, 30, 20, 0])
    core = sample_coreset(fed, local, shares, random_state=2)
    for z in range(3):
        drawn = (core.source == z) & ~core.is_center
        centers = local.centers[z][local.valid[z]]
        m = ((core.points[drawn][:, None] - centers[None]) ** 2).sum(-1).min(1)
        assert core.weights[drawn] @ m == pytest.approx(local.costs[z], rel=1e-9)


def test_coreset_cost_is_unbiased_and_close_for_any_centers(rng):
    fed = federation(rng, sizes=(2000, 1500, 500))
    local = local_solutions(fed, 5, random_state=0)
    shares = proportional_shares(600, local.costs)
    probes = [rng.standard_normal((5, 3)) * 6 + 5 for _ in range(4)]
    exact = np.array([kmeans_cost(fed.X, c) for c in probes])
    estimates = np.array([[weighted_cost(core.points, core.weights, c) for c in probes]
                          for core in (sample_coreset(fed, local, shares, random_state=s)
                                       for s in range(40))])
    # each coreset is within 10 %, and their mean within 1.5 % (40 independent coresets)
    assert np.all(np.abs(estimates / exact - 1) < 0.10)
    np.testing.assert_allclose(estimates.mean(0) / exact, 1.0, atol=0.015)


def test_signed_input_weights_keep_the_estimates_unbiased(rng):
    # Zhang et al. compress coresets again: inputs with negative weights
    sizes = (400, 300)
    v = rng.uniform(0.5, 2.0, size=sum(sizes))
    v[::7] *= -0.3
    fed = federation(rng, sizes=sizes, weights=v)
    local = local_solutions(fed, 4, random_state=0)
    core = sample_coreset(fed, local, np.array([150, 100]), random_state=0)
    np.testing.assert_allclose(np.bincount(core.source, weights=core.weights),
                               np.bincount(fed.device_of_row, weights=fed.weights))
    centers = rng.standard_normal((4, 3)) * 4 + 3
    exact = weighted_cost(fed.X, fed.weights, centers)
    mean = np.mean([weighted_cost(c.points, c.weights, centers) for c in
                    (sample_coreset(fed, local, np.array([150, 100]), random_state=s)
                     for s in range(60))])
    assert mean == pytest.approx(exact, rel=0.03)


def test_a_node_without_positive_weight_is_named(rng):
    v = np.ones(463)
    v[420:] = -1.0  # node 2 (rows 420..459) holds only negative weights
    fed = federation(rng, weights=v)
    with pytest.raises(ValueError, match="device 2 has no point of positive weight"):
        local_solutions(fed, 3, random_state=0)


def test_a_node_whose_points_all_weigh_zero_sends_an_empty_portion(rng):
    v = np.ones(463)
    v[420:460] = 0.0  # node 2 (rows 420..459): nothing to summarize
    fed = federation(rng, weights=v)
    local = local_solutions(fed, 3, random_state=0)
    assert local.costs[2] == 0 and not local.valid[2].any()
    shares = proportional_shares(200, local.costs)
    assert shares[2] == 0 and shares.sum() == 200
    core = sample_coreset(fed, local, shares, random_state=0)
    assert core.portion_sizes(fed.n_devices)[2] == 0
    # the coreset still carries the whole (positive) weight of the other nodes
    assert core.weights.sum() == pytest.approx(v.sum())


def test_theoretical_sizes_follow_theorem_1():
    from fedclust.coreset import theoretical_coreset_size

    k, d, n, eps, delta = 10, 20, 30, 0.2, 0.05
    kmeans = (k * d + np.log(1 / delta)) / eps**4 + n * k * np.log(n * k / delta)
    kmedian = (k * d + np.log(1 / delta)) / eps**2 + n * k
    assert theoretical_coreset_size(k, d, n, epsilon=eps, delta=delta) == pytest.approx(kmeans)
    assert theoretical_coreset_size(k, d, n, epsilon=eps, delta=delta, objective="kmedian",
                                    constant=3) == pytest.approx(3 * kmedian)
    with pytest.raises(ValueError, match="epsilon and delta must lie in"):
        theoretical_coreset_size(k, d, n, epsilon=1.5, delta=delta)


def test_a_tiny_node_after_a_huge_one_still_draws_its_own_points(rng):
    # one cumulative sum over all nodes would round the small node's mass away
    X = np.r_[rng.standard_normal((200, 2)) * 1e6, rng.standard_normal((200, 2)) * 1e-6]
    fed = Federation.from_devices(X, np.repeat([0, 1], 200))
    local = local_solutions(fed, 2, random_state=0)
    core = sample_coreset(fed, local, equal_shares(100, 2), random_state=0)
    assert core.portion_sizes(2).tolist() == [52, 52]
    np.testing.assert_allclose(np.bincount(core.source, weights=core.weights), [200, 200])
    small = (core.source == 1) & ~core.is_center
    assert np.abs(core.points[small]).max() < 1e-4


def test_kmedian_local_solutions_cost_distances_not_squares(rng):
    fed = federation(rng)
    local = local_solutions(fed, 4, random_state=0, objective="kmedian")
    assert local.valid.sum(1).tolist() == [4, 4, 4, 3]
    for z in range(fed.n_devices):
        rows = slice(fed.offsets[z], fed.offsets[z + 1])
        centers = local.centers[z][local.valid[z]]
        # m_p = d(p, B_i) (Algorithm 1 for k-median), M_i their sum
        distances = np.sqrt(((fed.X[rows][:, None] - centers[None]) ** 2).sum(-1)).min(1)
        np.testing.assert_allclose(local.row_costs[rows], distances, rtol=1e-9, atol=1e-12)
        assert local.costs[z] == pytest.approx(kmedian_cost(fed.X[rows], centers))
    # the draws' weights are M_i / (t_i m_q): the weighted sum of m over them is M_i
    core = sample_coreset(fed, local, np.array([40, 30, 20, 0]), random_state=2)
    for z in range(3):
        drawn = (core.source == z) & ~core.is_center
        centers = local.centers[z][local.valid[z]]
        m = np.sqrt(((core.points[drawn][:, None] - centers[None]) ** 2).sum(-1)).min(1)
        assert core.weights[drawn] @ m == pytest.approx(local.costs[z], rel=1e-9)


def test_kmedian_coreset_cost_is_unbiased_and_close_for_any_centers(rng):
    fed = federation(rng, sizes=(2000, 1500, 500))
    local = local_solutions(fed, 5, random_state=0, objective="kmedian")
    shares = proportional_shares(600, local.costs)
    probes = [rng.standard_normal((5, 3)) * 6 + 5 for _ in range(4)]
    exact = np.array([kmedian_cost(fed.X, c) for c in probes])
    estimates = np.array([[weighted_cost(core.points, core.weights, c, "kmedian")
                           for c in probes]
                          for core in (sample_coreset(fed, local, shares, random_state=s)
                                       for s in range(40))])
    # each coreset is within 10 %, and their mean within 1.5 % (40 independent coresets)
    assert np.all(np.abs(estimates / exact - 1) < 0.10)
    np.testing.assert_allclose(estimates.mean(0) / exact, 1.0, atol=0.015)


def test_local_solutions_name_a_bad_objective(rng):
    with pytest.raises(ValueError, match="objective must be one of"):
        local_solutions(federation(rng), 3, objective="k-median")

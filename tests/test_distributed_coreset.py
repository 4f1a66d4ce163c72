import networkx as nx
import numpy as np
import pandas as pd
import pytest

from fedclust import DistributedCoreset
from fedclust.centralized import best_kmeans
from fedclust.communication import SERVER
from fedclust.lloyd import lloyd
from fedclust.metrics import clustering_accuracy, kmeans_cost, kmedian_cost
from fedclust.seeding import kmeans_plusplus
from fedclust.topology import FullFlood, Topology


def mixture(n_devices=9, k=4, d=5, per_cluster=300, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d)) * 8
    labels = np.repeat(np.arange(k), per_cluster)
    X = centers[labels] + rng.standard_normal((len(labels), d))
    devices = rng.integers(0, n_devices, size=len(labels))
    return X, devices


def test_star_sends_costs_then_the_coreset_once():
    X, devices = mixture()
    km = DistributedCoreset(4, coreset_size=90, refine_max_iter=0,
                            random_state=0).fit(X, devices=devices)
    comm, d = km.communication_, X.shape[1]
    assert km.coreset_.size == 90 + 9 * 4
    kinds = comm.by_kind().set_index(["kind", "direction"])
    assert kinds.loc[("local_cost", "up"), "floats"] == 9
    assert kinds.loc[("total_cost", "down"), "floats"] == 9
    assert kinds.loc[("coreset", "up"), "floats"] == km.coreset_.size * (d + 1)
    assert comm["points_transmitted"] == km.coreset_.size
    assert comm["rounds"] == 3
    edges = comm.by_edge()
    assert set(edges.loc[edges.kind == "coreset", "receiver"]) == {SERVER}


def test_flooding_carries_every_portion_twice_over_every_edge():
    X, devices = mixture()
    grid = Topology.grid(3)  # 9 nodes, 12 edges
    km = DistributedCoreset(4, coreset_size=90, topology=grid, random_state=0)
    km.fit(X, devices=devices)
    comm, d, m = km.communication_, X.shape[1], grid.n_edges
    assert comm["points_transmitted"] == 2 * m * km.coreset_.size
    assert comm.total("coreset") == 2 * m * km.coreset_.size * (d + 1)
    assert comm.total("local_cost") == 2 * m * 9
    assert comm["floats_down"] == 0  # no server


def test_a_tree_carries_every_portion_depth_times():
    X, devices = mixture()
    tree = Topology.grid(3).spanning_tree(root=4)
    km = DistributedCoreset(4, coreset_size=90, topology=tree, random_state=0)
    km.fit(X, devices=devices)
    portions = km.coreset_.portion_sizes(9)
    depth = np.array([tree.depth[v] for v in range(9)])
    assert km.communication_["points_transmitted"] == int(portions @ depth)
    edges = km.communication_.by_edge()
    up = edges[edges.kind == "coreset"]
    assert all(tree.parent[s] == r for s, r in zip(up.sender, up.receiver, strict=True))


def test_combine_draws_equal_shares():
    X, devices = mixture()
    km = DistributedCoreset(4, coreset_size=90, construction="combine",
                            random_state=0).fit(X, devices=devices)
    assert km.coreset_.portion_sizes(9).tolist() == [10 + 4] * 9
    assert "local_cost" not in set(km.communication_.by_kind().kind)


def test_zhang_sends_each_node_coreset_to_its_parent_once():
    X, devices = mixture()
    grid = Topology.grid(3)
    km = DistributedCoreset(4, coreset_size=90, construction="zhang", topology=grid,
                            random_state=0).fit(X, devices=devices)
    tree = km.tree_
    edges = km.communication_.by_edge()
    assert len(edges) == 8 and (edges.messages == 1).all()  # 8 non-root nodes, one each
    assert all(tree.parent[s] == r for s, r in zip(edges.sender, edges.receiver, strict=True))
    # every coreset it sends holds 10 draws and up to 4 centers
    assert (edges.floats // (X.shape[1] + 1)).between(10, 14).all()
    assert km.communication_["points_transmitted"] == int(edges.floats.sum() // 6)
    # the root solves on its rows and its children's coresets, uncompressed
    into_root = int(edges.floats[edges.receiver == tree.root].sum() // 6)
    assert km.coreset_.size == int((devices == tree.root).sum()) + into_root
    np.testing.assert_allclose(km.coreset_.weights.sum(), len(X), rtol=1e-9)
    with pytest.raises(ValueError, match="construction='zhang' needs a graph"):
        DistributedCoreset(4, construction="zhang").fit(X, devices=devices)


@pytest.mark.parametrize("objective", ["kmeans", "kmedian"])
def test_zhang_takes_its_leaves_local_solutions_when_given(objective):
    from fedclust.algorithms.distributed_coreset import zhang_coreset
    from fedclust.communication import Communication
    from fedclust.coreset import local_solutions
    from fedclust.federation import Federation

    X, devices = mixture(n_devices=16)
    tree = Topology.grid(4).spanning_tree(random_state=0)
    federation = Federation.from_devices(X, devices, topology=Topology.grid(4))
    # the seeding alone (no Lloyd step): not the solutions the leaves reach by themselves,
    # which on this well-separated mixture are the same optimum from any seeding
    local = local_solutions(federation, 4, random_state=1, max_iter=0, objective=objective)
    parents = {int(tree.parent[v]) for v in tree.depth if v not in (SERVER, tree.root)}
    leaves = [z for z, v in enumerate(federation.device_ids.tolist()) if v not in parents]
    inner = [z for z, v in enumerate(federation.device_ids.tolist())
             if v in parents and v != tree.root]
    assert leaves and inner
    runs = {}
    for given in (None, local):
        comm = Communication()
        coreset, costs = zhang_coreset(federation, tree, 4, 320, rng=np.random.default_rng(2),
                                       comm=comm, max_iter=10, objective=objective,
                                       leaf_local=given)
        runs[given is None] = costs
        # still an unbiased coreset of the whole data, and the same messages
        np.testing.assert_allclose(coreset.weights.sum(), len(X), rtol=1e-9)
        assert len(comm.by_edge()) == 15
    # the leaves' costs are the given local solutions' to the last digit; the inner nodes
    # (their rows and their children's coresets) compute their own
    np.testing.assert_array_equal(runs[False][leaves], local.costs[leaves])
    assert not np.array_equal(runs[True][leaves], local.costs[leaves])
    assert np.isfinite(runs[False][inner]).all() and (runs[False][inner] > 0).all()


# Zhang et al.'s coresets of coresets lose accuracy at every level of the tree: at the same
# size they are far worse (cost ratio 1.4-1.9 at t = 300 here, 1.01-1.05 at t = 2700)
@pytest.mark.parametrize("construction, size", [("distributed", 300), ("combine", 300),
                                                ("zhang", 2700)])
def test_solution_on_the_coreset_is_near_the_global_one(construction, size):
    X, devices = mixture(k=6, per_cluster=500, seed=3)
    grid = Topology.grid(3)
    km = DistributedCoreset(6, coreset_size=size, construction=construction, topology=grid,
                            random_state=0).fit(X, devices=devices)
    best = best_kmeans(X, 6, seeds=range(5)).inertia
    assert kmeans_cost(X, km.cluster_centers_) / best < 1.1
    assert km.coreset_cost_ == pytest.approx(
        float(km.coreset_.weights @ ((km.coreset_.points[:, None] - km.cluster_centers_[None])
                                     ** 2).sum(-1).min(1)))


def test_bad_parameters_are_named():
    X, devices = mixture()
    name = "parameter of DistributedCoreset must be"
    with pytest.raises(ValueError, match=f"'construction' {name} a str among"):
        DistributedCoreset(construction="tree").fit(X, devices=devices)
    with pytest.raises(TypeError, match=f"'topology' {name} None or an instance of "
                                        f"'fedclust.topology.Topology'. Got 'grid'"):
        DistributedCoreset(topology="grid").fit(X, devices=devices)
    with pytest.raises(ValueError, match="coreset_size"):
        DistributedCoreset(coreset_size=-1).fit(X, devices=devices)
    with pytest.raises(ValueError, match=f"'objective' {name} a str among"):
        DistributedCoreset(objective="k-median").fit(X, devices=devices)


def labelled_mixture(seed=0, k=4, d=5, per_cluster=150, n_devices=9):
    rng = np.random.default_rng(seed)
    centers = 10.0 * np.eye(k, d)
    labels = np.repeat(np.arange(k), per_cluster)
    X = centers[labels] + rng.standard_normal((len(labels), d))
    return X, labels, rng.integers(0, n_devices, size=len(labels))


def independent_kmedian_cost(X, centers, labels, weights=None):
    w = np.ones(len(X)) if weights is None else weights
    return float(sum(w[i] * np.sqrt(np.sum((X[i] - centers[labels[i]]) ** 2))
                     for i in range(len(X))))


@pytest.mark.parametrize("construction", ["distributed", "combine", "zhang"])
def test_kmedian_recovers_blobs_and_reports_kmedian_costs(construction):
    X, truth, devices = labelled_mixture()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    # Zhang et al.'s coresets of coresets need more points (see the k-means test above)
    km = DistributedCoreset(4, coreset_size=180 if construction != "zhang" else 2700,
                            construction=construction, objective="kmedian",
                            topology=Topology.grid(3), random_state=0)
    km.fit(X, devices=devices, sample_weight=w)
    assert clustering_accuracy(truth, km.labels_) == 1.0
    expected = independent_kmedian_cost(X, km.cluster_centers_, km.labels_, w)
    assert km.inertia_ == pytest.approx(expected, rel=1e-10)
    assert km.score(X, sample_weight=w) == pytest.approx(-expected, rel=1e-10)
    assert km.score(X) == pytest.approx(
        -independent_kmedian_cost(X, km.cluster_centers_, km.predict(X)), rel=1e-10)
    # the solve minimized the weighted k-median cost of the coreset
    core = km.coreset_
    distances = np.sqrt(((core.points[:, None] - km.cluster_centers_[None]) ** 2).sum(-1))
    assert km.coreset_cost_ == pytest.approx(float(core.weights @ distances.min(1)), rel=1e-10)
    # and is near the centralized k-median solution (1.01-1.03 over seeds here)
    best = best_kmeans(X, 4, seeds=range(3), sample_weight=w, objective="kmedian").inertia
    assert km.inertia_ / best < 1.05


def test_kmedian_coreset_comes_from_kmedian_local_solutions():
    # the same fit with either objective: the k-median one samples by distances, so its local
    # costs are sums of distances, far below the sums of squares on this data
    X, _, devices = labelled_mixture(per_cluster=100)
    X = 5.0 * X  # unit noise becomes 5: squared distances grow 25 times, distances 5 times
    means = DistributedCoreset(4, coreset_size=100, random_state=0).fit(X, devices=devices)
    medians = DistributedCoreset(4, coreset_size=100, objective="kmedian",
                                 random_state=0).fit(X, devices=devices)
    ratio = means.local_costs_ / medians.local_costs_
    assert (ratio > 2.0).all()
    assert medians.inertia_ == pytest.approx(kmedian_cost(X, medians.cluster_centers_))
    assert means.inertia_ == pytest.approx(kmeans_cost(X, means.cluster_centers_))


def test_best_kmeans_keeps_the_restart_of_lowest_kmedian_cost():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 2)) * np.array([4.0, 1.0])  # no clear clusters: restarts differ
    w = rng.uniform(0.5, 2.0, size=120)
    best = best_kmeans(X, 5, seeds=range(6), sample_weight=w, objective="kmedian")
    restarts = []
    for seed in range(6):
        init, _ = kmeans_plusplus(X, 5, sample_weight=w, random_state=seed, power=1)
        restarts.append(lloyd(X, init, weights=w, objective="kmedian").inertia)
    assert len({round(c, 9) for c in restarts}) > 1
    assert best.inertia == pytest.approx(min(restarts), rel=1e-12)
    assert best.inertia == pytest.approx(kmedian_cost(X, best.centers, best.labels, w),
                                         rel=1e-10)
    with pytest.raises(ValueError, match="objective must be one of"):
        best_kmeans(X, 5, seeds=[0], objective="l1")


# ----------------------------------------------------------- communication helpers, directly
from fedclust.algorithms.distributed_coreset import (  # noqa: E402
    broadcast_costs,
    portion_route,
    send_portions,
)
from fedclust.communication import Communication  # noqa: E402


def test_send_portions_over_a_star_is_one_hop_per_nonempty_portion():
    star = Topology.star(range(4))
    comm = Communication()
    points = send_portions(comm, portion_route(star, [0, 1, 2, 3]), [5, 0, 2, 1], "coreset", 3)
    assert points == 8                      # the empty portion is not sent
    assert comm.floats == 8 * 3
    assert comm.total("coreset", "messages") == 3
    assert comm["rounds"] == 1
    edges = comm.by_edge()
    assert set(edges["receiver"]) == {SERVER} and set(edges["sender"]) == {0, 2, 3}


def test_send_portions_flooded_crosses_every_edge_twice_per_portion():
    grid = Topology.grid(3)                 # 9 nodes, 12 edges, diameter 4
    comm = Communication()
    sizes = np.arange(1, 10)
    points = send_portions(comm, portion_route(grid, range(9)), sizes, "coreset", 2)
    assert points == 2 * grid.n_edges * sizes.sum()
    assert comm.floats == 2 * points
    # Algorithm 3 forwards to every neighbour, the sender too: the farthest node receives
    # in round `diameter` and echoes in the next
    assert comm["rounds"] == grid.diameter + 1


@pytest.mark.parametrize("graph", ["grid", "path", "erdos_renyi", "preferential"])
def test_the_closed_form_flood_books_what_the_simulated_flood_sends(graph):
    # the ledger of Algorithm 3 simulated message by message (Topology.flood, echo) against
    # the closed form every graph's portions now travel by (Topology.full_flood)
    network = {"grid": lambda: Topology.grid(3, 4),
               "path": lambda: Topology.from_graph(nx.path_graph(7)),
               "erdos_renyi": lambda: Topology.erdos_renyi(30, 0.2, random_state=1),
               "preferential": lambda: Topology.preferential_attachment(25, random_state=2),
               }[graph]()
    ids = network.devices
    sizes = np.random.default_rng(0).integers(0, 4, size=len(ids))   # some portions empty
    simulated, closed = Communication(), Communication()
    points = send_portions(simulated, network.flood(ids), sizes, "coreset", 3)
    route = portion_route(network, ids)
    assert isinstance(route, FullFlood)
    assert send_portions(closed, route, sizes, "coreset", 3) == points
    assert dict(closed) == dict(simulated)
    pd.testing.assert_frame_equal(closed.by_edge(), simulated.by_edge())
    far = max(nx.eccentricity(network.graph, int(v)) for v in ids[sizes > 0])
    assert closed["rounds"] == far + 1


def test_send_portions_up_a_tree_pays_each_portion_its_depth():
    tree = Topology.grid(3).spanning_tree(root=4)   # BFS from the centre: depths 0, 1, 2
    comm = Communication()
    sizes = np.full(9, 10)
    points = send_portions(comm, portion_route(tree, range(9)), sizes, "coreset", 1)
    depths = np.array([tree.depth[v] for v in range(9)])
    assert points == int((depths * sizes).sum()) == 10 * (4 * 1 + 4 * 2)
    assert comm["rounds"] == tree.height == 2


def test_broadcast_costs_counts_one_scalar_per_node_and_hop():
    grid = Topology.grid(3)
    comm = Communication()
    broadcast_costs(grid, range(9), comm)
    assert comm.floats == 9 * 2 * grid.n_edges       # O(mn) scalars, flooded

    tree = grid.spanning_tree(root=4)
    comm = Communication()
    broadcast_costs(tree, range(9), comm)
    depths = sum(tree.depth[v] for v in range(9))
    assert comm.floats == depths + (9 - 1)            # up to the root, the sum back down

    star = Topology.star(range(5))
    comm = Communication()
    broadcast_costs(star, range(5), comm)
    assert comm.floats == 5 + 5 and comm["rounds"] == 2

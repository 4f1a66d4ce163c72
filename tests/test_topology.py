import networkx as nx
import numpy as np
import pytest

from fedclust.communication import SERVER
from fedclust.topology import Topology


def expected_counts(graph: nx.Graph, sources, *, echo: bool) -> dict:
    """Transmissions per (undirected edge, message), from distances alone.

    Algorithm 3 as printed (echo): every node forwards every message once to every
    neighbour, so each message crosses each edge exactly twice. Without echo, a node does not
    send a message back to where it came from: an edge whose ends are equally far from the
    message's source carries it twice (both ends forward it at once), any other edge once.
    """
    out = {}
    for m, s in enumerate(sources):
        dist = nx.single_source_shortest_path_length(graph, s)
        for u, v in graph.edges:
            lo, hi = min(u, v), max(u, v)
            out[(lo, hi, m)] = 2 if echo or dist[u] == dist[v] else 1
    return out


def topologies():
    path = Topology.from_graph(nx.path_graph(7), name="path")
    odd_ring = Topology.from_graph(nx.cycle_graph(7), name="ring 7")
    even_ring = Topology.from_graph(nx.cycle_graph(8), name="ring 8")
    star = Topology.star(6)
    grid = Topology.grid(10, 10)
    return [path, odd_ring, even_ring, star, grid]


@pytest.mark.parametrize("topology", topologies(), ids=lambda t: t.name)
@pytest.mark.parametrize("echo", [True, False])
def test_flooding_sends_each_message_over_each_edge_as_the_theory_says(topology, echo):
    rng = np.random.default_rng(0)
    nodes = np.array(sorted(topology.graph.nodes))
    sources = rng.choice(nodes, size=5)
    flood = topology.flood(sources, echo=echo)
    assert flood.edge_counts() == expected_counts(topology.graph, sources, echo=echo)
    # every transmission goes along an edge, and every node ends with every message
    for s, r in zip(flood.sender, flood.receiver, strict=True):
        assert topology.graph.has_edge(int(s), int(r))
    for m, source in enumerate(sources):
        reached = set(flood.receiver[flood.message == m]) | {source}
        assert reached == set(nodes)
    # with echo, the last forwards happen one round after the farthest node is reached
    ecc = max(nx.eccentricity(topology.graph, int(s)) for s in sources)
    if echo:
        assert flood.n_rounds == ecc + 1


def test_bipartite_graphs_carry_each_message_once_per_edge_without_echo():
    grid = Topology.grid(10, 10)
    flood = grid.flood(grid.devices, echo=False)
    assert flood.n_transmissions == grid.n_edges * grid.n_devices
    assert set(flood.edge_counts().values()) == {1}


def test_odd_ring_has_exactly_one_edge_carrying_a_message_twice_without_echo():
    ring = Topology.from_graph(nx.cycle_graph(5), name="ring")
    counts = ring.flood([0], echo=False).edge_counts()
    assert sorted(counts.values()) == [1, 1, 1, 1, 2]
    assert counts[(2, 3, 0)] == 2  # the edge opposite node 0


def test_flooding_by_hand_on_a_triangle():
    triangle = Topology.from_graph(nx.complete_graph(3), name="triangle")
    flood = triangle.flood([0], echo=False)
    # round 1: 0 -> 1, 0 -> 2; round 2: 1 -> 2 and 2 -> 1 (both just received it)
    sent = sorted(zip(flood.round.tolist(), flood.sender.tolist(), flood.receiver.tolist(),
                      strict=True))
    assert sent == [(1, 0, 1), (1, 0, 2), (2, 1, 2), (2, 2, 1)]
    assert flood.n_rounds == 2


def test_star_has_a_server_hub_and_device_leaves():
    star = Topology.star([3, 5, 9])
    assert star.is_star and star.server == SERVER
    assert star.devices.tolist() == [3, 5, 9]
    assert sorted(star.graph.neighbors(SERVER)) == [3, 5, 9]
    assert star.n_edges == 3 and star.diameter == 2


def test_erdos_renyi_is_connected_and_seeded():
    a = Topology.erdos_renyi(100, 0.3, random_state=1)
    b = Topology.erdos_renyi(100, 0.3, random_state=1)
    assert nx.is_connected(a.graph) and a.n_devices == 100
    assert sorted(a.graph.edges) == sorted(b.graph.edges)
    # about p n (n - 1) / 2 edges
    assert abs(a.n_edges - 0.3 * 4950) < 5 * np.sqrt(0.3 * 0.7 * 4950)
    with pytest.raises(ValueError, match="was not connected in 3 draws; raise p"):
        Topology.erdos_renyi(50, 0.001, random_state=0, max_tries=3)


def test_grid_and_preferential_attachment_shapes():
    grid = Topology.grid(10)
    assert grid.n_devices == 100 and grid.n_edges == 2 * 10 * 9 and grid.diameter == 18
    assert sorted(grid.graph.neighbors(0)) == [1, 10]
    ba = Topology.preferential_attachment(100, 2, random_state=0)
    assert ba.n_devices == 100 and ba.n_edges == 2 * (100 - 2)
    degrees = ba.degrees(ba.devices)
    assert degrees.max() > 4 * np.median(degrees)  # hubs


def test_spanning_tree_is_a_bfs_tree_from_the_root():
    grid = Topology.grid(5)
    tree = grid.spanning_tree(root=12)
    assert nx.is_tree(tree.graph) and tree.root == 12
    hops = nx.single_source_shortest_path_length(grid.graph, 12)
    assert all(tree.depth[v] == hops[v] for v in grid.graph.nodes)
    assert tree.height == 4
    assert tree.path_to_root(0)[-1] == 12 and len(tree.path_to_root(0)) == hops[0] + 1
    order = tree.bottom_up()
    assert all(order.index(v) < order.index(tree.parent[v]) for v in order if v != 12)
    random_root = grid.spanning_tree(random_state=3).root
    assert random_root == grid.spanning_tree(random_state=3).root


def test_bad_topologies_are_refused():
    with pytest.raises(ValueError, match="not connected"):
        Topology.from_graph(nx.empty_graph(3), name="isolated")
    with pytest.raises(ValueError, match="non-negative integer device ids"):
        Topology.from_graph(nx.path_graph(["a", "b"]))
    grid = Topology.grid(2)
    with pytest.raises(ValueError, match=r"devices \[7\] are not nodes of the topology"):
        grid.check_devices([0, 7])
    with pytest.raises(ValueError, match="flood sources"):
        grid.flood([9])


def test_messages_climb_to_the_root_one_edge_per_round():
    tree = Topology.grid(3).spanning_tree(root=4)
    up = tree.to_root([0, 4, 8])
    # node 0 is two hops from the centre of a 3x3 grid, node 8 too, the root none
    assert up.n_transmissions == 4 and up.n_rounds == 2
    for m, node in enumerate([0, 4, 8]):
        hops = up.message == m
        assert up.sender[hops].tolist() == tree.path_to_root(node)[:-1]
        assert up.round[hops].tolist() == list(range(1, tree.depth[node] + 1))
    with pytest.raises(ValueError, match="node 9 is not in the tree"):
        tree.to_root([9])

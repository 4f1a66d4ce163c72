"""The one topology model: who can talk to whom, and what flooding a graph costs.
:class:`Topology` is a connected graph of device ids -- the star around a server (every
estimator's default) or one of the serverless graphs of Balcan, Ehrlich & Liang (NeurIPS 2013,
Sec. 5) -- with its rooted spanning trees (:class:`SpanningTree`) and its flood
(:meth:`Topology.flood`), a round-by-round simulation of their Message-Passing (Algorithm 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from ._validation import check_int, check_random_state, check_real
from .communication import SERVER

__all__ = ["Topology", "SpanningTree", "Flood", "FullFlood", "SERVER"]


@dataclass(frozen=True)
class Flood:
    """Every transmission of a flooding simulation (:meth:`Topology.flood`).

    Attributes
    ----------
    sender, receiver, message, round : ndarray of shape (n_transmissions,)
        Transmission ``i`` carried message ``message[i]`` from node ``sender[i]`` to its
        neighbour ``receiver[i]`` in round ``round[i]`` (rounds count from 1).
    sources : ndarray of shape (n_messages,)
        The node each message starts from.
    n_rounds : int
        Rounds until no node had anything left to send.
    """

    sender: np.ndarray
    receiver: np.ndarray
    message: np.ndarray
    round: np.ndarray
    sources: np.ndarray
    n_rounds: int

    @property
    def n_transmissions(self) -> int:
        return len(self.sender)

    def edge_counts(self) -> dict:
        """``{(u, v, message): transmissions}`` over undirected edges ``u < v``."""
        lo = np.minimum(self.sender, self.receiver)
        hi = np.maximum(self.sender, self.receiver)
        keys, counts = np.unique(np.stack([lo, hi, self.message], axis=1), axis=0,
                                 return_counts=True)
        return {tuple(int(v) for v in key): int(c) for key, c in zip(keys, counts, strict=True)}


@dataclass(frozen=True)
class FullFlood:
    """Message-Passing with echo (:meth:`Topology.full_flood`) in closed form: every message
    crosses every directed edge exactly once, so the flood is its edges and, per message, the
    round of its last transmission, not a row per (message, edge) -- ``n_messages x 2 E``
    rows, 8 million and 1.6 GB for 299 nodes of G(n, 0.3).

    Attributes
    ----------
    sender, receiver : ndarray of shape (2 * n_edges,)
        Every directed edge once.
    sources : ndarray of shape (n_messages,)
        The node each message starts from.
    rounds : ndarray of shape (n_messages,)
        Rounds message ``m``'s flood takes: the eccentricity of its source plus one (the
        farthest nodes forward it once more), 0 on a graph without edges.
    """

    sender: np.ndarray
    receiver: np.ndarray
    sources: np.ndarray
    rounds: np.ndarray


class Topology:
    """A connected communication graph whose nodes are device ids.

    An undirected connected graph (``networkx``). The star -- every device talks to a server
    and only to it -- is the default of every estimator and has one extra node,
    :data:`~fedclust.communication.SERVER`. The general topologies of Balcan, Ehrlich & Liang
    (NeurIPS 2013, Sec. 5) have no server: Erdős–Rényi G(n, p) resampled until connected, the
    2-D grid and preferential attachment (Barabási–Albert). Rooted spanning trees come from a
    breadth-first search from a (random) root, as in their Sec. 5. :meth:`flood` simulates
    their Algorithm 3 (Message-Passing) round by round and returns every transmission;
    :meth:`full_flood` gives the same flood with echo in closed form (its edges and each
    message's rounds), which is what the ledger needs on a dense graph.

    Build one with :meth:`star`, :meth:`erdos_renyi`, :meth:`grid`,
    :meth:`preferential_attachment` or :meth:`from_graph`.

    Attributes
    ----------
    graph : networkx.Graph
    name : str
        What the graph is, for tables and figure titles (e.g. ``"grid 10x10"``).
    server : int or None
        :data:`~fedclust.communication.SERVER` for a star, else None.

    Examples
    --------
    >>> from fedclust.topology import Topology
    >>> grid = Topology.grid(3, 4)
    >>> grid.n_devices, grid.n_edges, grid.diameter
    (12, 17, 5)
    >>> flood = grid.flood([0, 11])          # two messages, from opposite corners
    >>> flood.n_transmissions == 2 * 2 * grid.n_edges  # each crosses each edge twice
    True
    """

    def __init__(self, graph: nx.Graph, *, name: str, server: int | None = None):
        if graph.number_of_nodes() == 0:
            raise ValueError("a topology needs at least one node")
        if not nx.is_connected(graph):
            raise ValueError(f"topology {name!r} is not connected "
                             f"({nx.number_connected_components(graph)} components)")
        if server is not None and server not in graph:
            raise ValueError(f"server node {server} is not in topology {name!r}")
        self.graph = graph
        self.name = name
        self.server = server

    # ---------------------------------------------------------------- constructors
    @classmethod
    def star(cls, devices) -> Topology:
        """The server-and-devices topology: every device linked to the server only.

        ``devices`` is a number of devices (ids ``0..n-1``) or an array of device ids.
        """
        ids = _device_ids(devices)
        graph = nx.Graph()
        graph.add_node(SERVER)
        graph.add_edges_from((SERVER, int(z)) for z in ids)
        return cls(graph, name=f"star ({len(ids)} devices)", server=SERVER)

    @classmethod
    def erdos_renyi(cls, n_devices: int, p: float, *, random_state=None,
                    max_tries: int = 1000) -> Topology:
        """Erdős–Rényi G(n, p), resampled until connected (Balcan et al., Sec. 5: p = 0.3)."""
        n = check_int(n_devices, "n_devices", low=1)
        p = check_real(p, "p", low=0.0, high=1.0, low_inclusive=False)
        rng = check_random_state(random_state)
        for _ in range(check_int(max_tries, "max_tries", low=1)):
            graph = nx.gnp_random_graph(n, p, seed=int(rng.integers(2**31 - 1)))
            if nx.is_connected(graph):
                return cls(graph, name=f"Erdős–Rényi (n={n}, p={p:g})")
        raise ValueError(f"G(n={n}, p={p:g}) was not connected in {max_tries} draws; "
                         f"raise p (connectivity needs p above about ln(n)/n = "
                         f"{np.log(max(n, 2)) / n:.3f})")

    @classmethod
    def grid(cls, rows: int, cols: int | None = None) -> Topology:
        """The ``rows x cols`` 2-D grid (square when ``cols`` is None); node ``r * cols + c``."""
        rows = check_int(rows, "rows", low=1)
        cols = rows if cols is None else check_int(cols, "cols", low=1)
        graph = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, cols),
                                                   ordering="sorted")
        return cls(graph, name=f"grid {rows}x{cols}")

    @classmethod
    def preferential_attachment(cls, n_devices: int, n_links: int = 2, *,
                                random_state=None) -> Topology:
        """Preferential attachment (Barabási–Albert): every new node links to ``n_links``
        existing nodes chosen with probability proportional to their degree."""
        n = check_int(n_devices, "n_devices", low=2)
        m = check_int(n_links, "n_links", low=1, high=n - 1)
        rng = check_random_state(random_state)
        graph = nx.barabasi_albert_graph(n, m, seed=int(rng.integers(2**31 - 1)))
        return cls(graph, name=f"preferential attachment (n={n}, m={m})")

    @classmethod
    def from_graph(cls, graph: nx.Graph, *, name: str = "custom") -> Topology:
        """Any connected graph whose nodes are non-negative integer device ids."""
        bad = [v for v in graph.nodes if not isinstance(v, (int, np.integer)) or v < 0]
        if bad:
            raise ValueError(f"topology nodes must be non-negative integer device ids; got "
                             f"{bad[:5]}")
        return cls(nx.Graph(graph), name=name)

    # ---------------------------------------------------------------- structure
    @property
    def devices(self) -> np.ndarray:
        """Device ids (every node but the server), sorted."""
        return np.array(sorted(v for v in self.graph.nodes if v != self.server), dtype=np.int64)

    @property
    def n_devices(self) -> int:
        return self.graph.number_of_nodes() - (self.server is not None)

    @property
    def n_edges(self) -> int:
        return self.graph.number_of_edges()

    @property
    def diameter(self) -> int:
        return nx.diameter(self.graph)

    @property
    def is_star(self) -> bool:
        return self.server is not None

    def degrees(self, devices) -> np.ndarray:
        """Degree of each device of ``devices``."""
        return np.array([self.graph.degree(int(z)) for z in devices], dtype=np.int64)

    def check_devices(self, device_ids) -> None:
        """Raise naming the ids of ``device_ids`` that are not nodes of this topology."""
        missing = [int(z) for z in device_ids if int(z) not in self.graph or z == self.server]
        if missing:
            raise ValueError(f"devices {missing[:10]} are not nodes of the topology "
                             f"{self.name!r} (its devices are {_summarize(self.devices)})")

    def __repr__(self) -> str:
        return f"Topology({self.name!r}, {self.graph.number_of_nodes()} nodes, " \
               f"{self.n_edges} edges)"

    # ---------------------------------------------------------------- trees and flooding
    def spanning_tree(self, root: int | None = None, *, random_state=None) -> SpanningTree:
        """Breadth-first spanning tree from ``root`` (uniformly random device when None), as
        Balcan et al. restrict a graph for Zhang et al.'s algorithm (Sec. 5)."""
        if root is None:
            root = int(check_random_state(random_state).choice(self.devices))
        if root not in self.graph:
            raise ValueError(f"root {root} is not a node of topology {self.name!r}")
        parent = {root: None}
        depth = {root: 0}
        for u, v in nx.bfs_edges(self.graph, root, sort_neighbors=sorted):
            parent[v] = u
            depth[v] = depth[u] + 1
        tree = nx.Graph()
        tree.add_nodes_from(self.graph.nodes)
        tree.add_edges_from((v, u) for v, u in parent.items() if u is not None)
        return SpanningTree(tree, name=f"BFS tree of {self.name} (root {root})",
                            server=self.server, root=root, parent=parent, depth=depth)

    def _indexed(self, sources):
        """Nodes sorted, ``sources`` as ids and as positions among them, and the edges as
        position pairs; unknown sources are named."""
        nodes = np.array(sorted(self.graph.nodes), dtype=np.int64)
        index = {int(v): i for i, v in enumerate(nodes)}
        sources = np.asarray(sources, dtype=np.int64).ravel()
        unknown = [int(s) for s in sources if int(s) not in index]
        if unknown:
            raise ValueError(f"flood sources {unknown[:10]} are not nodes of {self.name!r}")
        at = np.array([index[int(s)] for s in sources], dtype=np.int64)
        edges = np.array([(index[u], index[v]) for u, v in self.graph.edges],
                         dtype=np.int64).reshape(-1, 2)
        return nodes, sources, at, edges

    def full_flood(self, sources) -> FullFlood:
        """:meth:`flood` with ``echo=True`` (Algorithm 3 as printed), one message per source,
        without simulating it: each message crosses each directed edge once, in the round
        one more than its sender's distance from the source."""
        nodes, sources, at, edges = self._indexed(sources)
        rounds = np.zeros(len(sources), dtype=np.int64)
        if len(edges):
            adjacency = sp.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                                      shape=(len(nodes), len(nodes)))
            starts, where = np.unique(at, return_inverse=True)
            eccentricity = np.empty(len(starts), dtype=np.int64)
            for lo in range(0, len(starts), 256):     # 256 BFS rows of n distances at a time
                dist = csgraph.shortest_path(adjacency, directed=False, unweighted=True,
                                             indices=starts[lo:lo + 256])
                eccentricity[lo:lo + 256] = dist.max(axis=1)
            rounds = eccentricity[where.ravel()] + 1
        directed = np.concatenate([edges, edges[:, ::-1]])
        return FullFlood(sender=nodes[directed[:, 0]], receiver=nodes[directed[:, 1]],
                         sources=sources, rounds=rounds)

    def flood(self, sources, *, echo: bool = True) -> Flood:
        """Simulate Message-Passing (Balcan et al., Algorithm 3) of one message per source.

        Round 1: each source sends its message to all its neighbours. Afterwards, a node that
        received a message for the first time in the previous round forwards it to all its
        neighbours (``echo=True``, Algorithm 3 as printed: every node sends every message
        once to every neighbour, so each message crosses each edge exactly twice), or to all
        neighbours but those it received it from in that round (``echo=False``: an edge
        whose ends are equally far from the source carries the message twice, every other
        edge once). Every node ends holding every message.

        Parameters
        ----------
        sources : array-like of int
            The node each message starts from (one message per entry; a node may start
            several).
        echo : bool, default=True

        Returns
        -------
        Flood
        """
        nodes, sources, at, edges = self._indexed(sources)
        n, n_msg, E = len(nodes), len(sources), len(edges)
        src = np.concatenate([edges[:, 0], edges[:, 1]])       # directed edge e: src -> dst
        dst = np.concatenate([edges[:, 1], edges[:, 0]])
        reverse = np.concatenate([np.arange(E, 2 * E), np.arange(E)])
        into = sp.csr_matrix((np.ones(2 * E), (dst, np.arange(2 * E))), shape=(n, 2 * E))

        has = np.zeros((n, n_msg), dtype=bool)
        has[at, np.arange(n_msg)] = True
        new = has.copy()
        sent_before = np.zeros((2 * E, n_msg), dtype=bool)
        records = []
        rnd = 0
        while True:
            send = new[src]
            if not echo:
                send &= ~sent_before[reverse]
            if not send.any():
                break
            rnd += 1
            e, m = np.nonzero(send)
            records.append((src[e], dst[e], m, np.full(len(e), rnd)))
            received = (into @ send.astype(np.float64)) > 0
            new = received & ~has
            has |= new
            sent_before = send
        if records:
            s, r, m, t = (np.concatenate(parts) for parts in zip(*records, strict=True))
        else:
            s = r = m = t = np.zeros(0, dtype=np.int64)
        return Flood(sender=nodes[s], receiver=nodes[r], message=m.astype(np.int64),
                     round=t.astype(np.int64), sources=sources, n_rounds=rnd)


class SpanningTree(Topology):
    """A rooted spanning tree of a topology (:meth:`Topology.spanning_tree`).

    Attributes
    ----------
    root : int
    parent : dict
        ``parent[v]`` is the parent of node ``v`` (None for the root).
    depth : dict
        Hops from ``v`` to the root.
    """

    def __init__(self, graph, *, name, server, root, parent, depth):
        super().__init__(graph, name=name, server=server)
        self.root = root
        self.parent = parent
        self.depth = depth

    @property
    def height(self) -> int:
        return max(self.depth.values())

    def children(self, node: int) -> list[int]:
        return sorted(v for v, p in self.parent.items() if p == node)

    def bottom_up(self) -> list[int]:
        """Every node, deepest first: each node comes after all its descendants."""
        return sorted(self.parent, key=lambda v: (-self.depth[v], v))

    def path_to_root(self, node: int) -> list[int]:
        """``[node, parent, ..., root]``."""
        path = [node]
        while self.parent[path[-1]] is not None:
            path.append(self.parent[path[-1]])
        return path

    def to_root(self, sources) -> Flood:
        """Every transmission of messages that climb from ``sources`` to the root, one edge
        per round (Balcan et al., Theorem 3: a portion crosses ``depth`` edges)."""
        sources = np.asarray(sources, dtype=np.int64).ravel()
        sender, receiver, message, rnd = [], [], [], []
        for m, node in enumerate(sources.tolist()):
            if node not in self.parent:
                raise ValueError(f"node {node} is not in the tree {self.name!r}")
            path = self.path_to_root(node)
            sender += path[:-1]
            receiver += path[1:]
            message += [m] * (len(path) - 1)
            rnd += list(range(1, len(path)))
        as_array = lambda values: np.asarray(values, dtype=np.int64)  # noqa: E731
        return Flood(sender=as_array(sender), receiver=as_array(receiver),
                     message=as_array(message), round=as_array(rnd), sources=sources,
                     n_rounds=max(rnd, default=0))


def _device_ids(devices) -> np.ndarray:
    if np.ndim(devices) == 0:
        return np.arange(check_int(devices, "devices", low=1))
    ids = np.unique(np.asarray(devices, dtype=np.int64))
    if ids.size == 0 or ids.min() < 0:
        raise ValueError("device ids must be non-negative integers")
    return ids


def _summarize(ids: np.ndarray) -> str:
    if len(ids) and np.array_equal(ids, np.arange(ids[0], ids[0] + len(ids))):
        return f"{ids[0]}..{ids[-1]}"
    return str(ids[:10].tolist()) + ("..." if len(ids) > 10 else "")

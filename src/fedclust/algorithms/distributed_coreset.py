"""Distributed k-means (or k-median) on general topologies through a distributed coreset.

(Balcan, Ehrlich & Liang, "Distributed k-Means and k-Median Clustering on General Topologies",
NeurIPS 2013.) The nodes build one coreset of all the data together (Algorithm 1, see
:mod:`fedclust.coreset`), share its portions over the communication graph, and every node
solves the weighted k-means (or k-median) problem on the whole coreset (Algorithm 2). The
three constructions the paper compares (``construction``) and how the portions travel on a
star, a tree and a general graph: ``docs/algorithms.md`` (Distributed coresets).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..centralized import best_kmeans
from ..communication import SERVER, Communication
from ..coreset import (
    Coreset,
    LocalSolutions,
    equal_shares,
    local_solutions,
    proportional_shares,
    sample_coreset,
)
from ..federation import Federation
from ..lloyd import assign, tolerance
from ..metrics import kmedian_cost, labelled_cost
from ..topology import Flood, FullFlood, SpanningTree, Topology
from ._base import (
    POSITIVE_INT,
    TOL,
    FederatedClusteringMixin,
    warn_not_converged,
)

__all__ = ["DistributedCoreset", "portion_route", "send_portions", "broadcast_costs",
           "zhang_coreset"]


class DistributedCoreset(FederatedClusteringMixin):
    """k-means or k-median on a distributed coreset (Balcan, Ehrlich & Liang 2013), or its
    baselines.

    Parameters
    ----------
    n_clusters : int, default=8
    coreset_size : int, default=1000
        ``t``: points drawn in all, over every node (the coreset also holds every node's ``k``
        local centers). For ``"zhang"`` every node draws ``t / n`` points.
    construction : {"distributed", "combine", "zhang"}, default="distributed"
        See the module docstring.
    objective : {"kmeans", "kmedian"}, default="kmeans"
        The clustering cost, ``sum w d(p, x)^2`` or ``sum w d(p, x)`` (Sec. 2). For
        ``"kmedian"`` every local solution (Algorithm 1, step 1, also Zhang et al.'s) is
        k-median's (``D`` seeding and Lloyd with Weiszfeld updates), the sampling uses
        ``m_p = d(p, B_i)``, the solve on the coreset minimizes the weighted k-median cost
        (:func:`fedclust.centralized.best_kmeans`), and ``inertia_``, ``coreset_cost_``,
        ``local_costs_`` and ``score`` are k-median costs.
    topology : Topology or None, default=None
        The communication graph over the device ids; None is a star around a server. For
        ``"zhang"`` a graph that is not a :class:`~fedclust.topology.SpanningTree` is reduced
        to the breadth-first tree from a uniformly random root.
    n_init : int, default=5
        Restarts (a seeding, then weighted Lloyd) of the solve on the coreset; the lowest
        coreset cost is kept (the paper runs Lloyd's algorithm on the coreset and leaves its
        initialization open: *not in the paper*).
    init : {"auto", "k-means++"}, default="auto"
        The seeding of each restart: ``"auto"``, scikit-learn's greedy k-means++ for k-means
        (``KMeans``' seeding; points of weight <= 0 are not drawn) and ``D`` seeding for
        k-median; ``"k-means++"``, k-means++ as Arthur & Vassilvitskii draw it (``D^2``, or
        ``D`` for k-median). Greedy seeding brought the solve from 1.11 to 1.38 times
        ``KMeans()``'s cost down to it where ``k`` is 20 to 50
        (``benchmarks/results/defaults.md``).
    max_iter : int, default=300
        Lloyd iterations at most, in the local solutions and in the solve; without the
        refinement, a solve whose kept restart reaches it before converging warns
        (``ConvergenceWarning``).
    tol : float, default=1e-4
        The solve on the coreset (k-means) converges when no label changes or when an update
        moves the centers by at most ``tol`` times the coreset's mean feature variance (its
        weighted moments, which the server holds: nothing more is sent) in all, as
        scikit-learn's ``KMeans``; ``0``: only when no label changes (not in the paper:
        it runs Lloyd's algorithm on the coreset without saying when it stops); also the
        refinement's test, on the rows' variance.
    refine_max_iter : int or "auto", default="auto"
        Lloyd rounds at most over the whole federation after the solve (not in the paper):
        from the coreset's centers, each round the devices return their per-cluster sums and
        counts (:class:`~fedclust.DistributedLloyd`'s round) until ``tol`` holds. A solution
        on a coreset is near, not at, a fixed point of the rows: without it the centers land
        2 to 6 % above the optimum where ``KMeans()`` lands on it
        (``benchmarks/results/defaults.md``). ``"auto"``: 300 where the devices talk to a
        server (``topology=None``) and the objective is k-means, else 0 (a graph has no node
        that gathers the sums; Lloyd rounds minimize the k-means cost). ``0``: the paper's
        algorithm (what the pipeline runs).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
        Nearest center of every training row.
    inertia_ : float
        Cost of the objective (k-means, or k-median) of the training data (not of the
        coreset), every row at its label.
    n_iter_ : int
        Lloyd iterations of the kept solve on the coreset.
    n_iter_refine_ : int
        Lloyd updates of the refinement over the federation (0 without it).
    converged_ : bool
        Whether the refinement converged before ``refine_max_iter``; without one, whether the
        kept solve converged before ``max_iter``.
    coreset_ : Coreset
        The coreset the solution was computed on (for ``"zhang"``: the root's input, its rows
        and its children's coresets).
    coreset_cost_ : float
        Weighted cost (of the objective) of the coreset under the solve's centers (before
        the refinement).
    local_costs_ : ndarray of shape (n_devices,)
        Cost of every node's local solution (sorted device order); for ``"zhang"`` of the
        node's combined input, NaN for the root (it builds none).
    tree_ : SpanningTree or None
        The tree a ``"zhang"`` fit (or a fit on a tree) ran on.
    communication_ : Communication
        Kinds ``local_cost`` (one float per hop) and ``coreset`` (``d + 1`` floats per point
        and hop: the coordinates and the weight). ``points_transmitted`` (a note) counts
        points over hops, the paper's measure of communication. The refinement adds
        :class:`~fedclust.DistributedLloyd`'s rounds and kinds (``centers``,
        ``cluster_sums``, ``cluster_counts``, ``data_moments``); ``refine_rounds`` is noted.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import DistributedCoreset
    >>> from fedclust.topology import Topology
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.1, (200, 2)), rng.normal(5, 0.1, (200, 2))]
    >>> devices = np.arange(400) % 9
    >>> km = DistributedCoreset(2, coreset_size=60, topology=Topology.grid(3),
    ...                         refine_max_iter=0, random_state=0).fit(X, devices=devices)
    >>> [round(float(c)) for c in sorted(km.cluster_centers_[:, 0])]
    [0, 5]
    >>> km.coreset_.size  # 60 draws and 2 local centers on each of the 9 nodes
    78
    """

    _parameter_constraints: dict = {
        **FederatedClusteringMixin._parameter_constraints,
        "coreset_size": [Interval(Integral, 0, None, closed="left")],
        "construction": [StrOptions({"distributed", "combine", "zhang"})],
        "objective": [StrOptions({"kmeans", "kmedian"})],
        "topology": [None, Topology],
        "n_init": [POSITIVE_INT],
        "max_iter": [POSITIVE_INT],
        "tol": [TOL],
        "init": [StrOptions({"auto", "k-means++"})],
        "refine_max_iter": [StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, n_clusters=8, coreset_size=1000, *, construction="distributed",
                 objective="kmeans", topology=None, n_init=5, init="auto", max_iter=300,
                 tol=1e-4, refine_max_iter="auto", random_state=None):
        self.n_clusters = n_clusters
        self.coreset_size = coreset_size
        self.construction = construction
        self.objective = objective
        self.topology = topology
        self.n_init = n_init
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.refine_max_iter = refine_max_iter
        self.random_state = random_state

    def _fit(self, federation, rng, comm, callback):
        k, d = self.n_clusters, federation.n_features
        self.tree_ = None
        if self.construction == "zhang":
            coreset, costs = self._zhang(federation, rng, comm)
        else:
            local = local_solutions(federation, k, random_state=rng, max_iter=self.max_iter,
                                    objective=self.objective)
            Z = federation.n_devices
            network, ids = federation.network, federation.node_ids
            if isinstance(network, SpanningTree):
                self.tree_ = network
            if self.construction == "distributed":
                # Algorithm 1, round 1: every node learns every cost (one float each)
                broadcast_costs(network, ids, comm)
                shares = proportional_shares(self.coreset_size, local.costs)
            else:
                shares = equal_shares(self.coreset_size, Z)
            coreset = sample_coreset(federation, local, shares, random_state=rng)
            points = send_portions(comm, portion_route(network, ids),
                                   coreset.portion_sizes(Z), "coreset", d + 1)
            comm.note("points_transmitted", points)
            costs = local.costs
        seeds = rng.integers(2**63 - 1, size=self.n_init)
        # Algorithm 2: the weighted problem of the objective, solved on the whole coreset
        # the coreset's weighted variance estimates the data's (negative weights may make
        # the estimate negative: then only unchanged labels stop)
        tol = max(tolerance(coreset.points, self.tol, coreset.weights), 0.0)
        greedy = self.init == "auto" and self.objective == "kmeans"
        result = best_kmeans(coreset.points, k, seeds, sample_weight=coreset.weights,
                             max_iter=self.max_iter, objective=self.objective, tol=tol,
                             seeding="greedy" if greedy else "kmeans++")
        self.cluster_centers_ = result.centers.astype(federation.X.dtype, copy=False)
        self.n_iter_ = result.n_iter
        refine_max_iter = self._refine_max_iter(federation.network)
        refined = self._refine_by_lloyd(federation, comm, refine_max_iter)
        if not refine_max_iter:
            self.labels_ = federation.to_original_order(assign(federation.X,
                                                               self.cluster_centers_)[0])
        # refined, the centers are Lloyd's on the rows: the solve's own end no longer matters
        self.converged_ = refined if refine_max_iter else bool(result.converged)
        if refine_max_iter and not self.converged_:
            warn_not_converged(self, "refine_max_iter", refine_max_iter,
                               "DistributedCoreset's refinement")
        elif not self.converged_:
            warn_not_converged(self, "max_iter", self.max_iter)
        self.coreset_ = coreset
        self.coreset_cost_ = result.inertia
        self.local_costs_ = costs
        comm.note("coreset_size", coreset.size)

    def _refine_max_iter(self, network: Topology) -> int:
        """The refinement's round cap: ``refine_max_iter``, or what ``"auto"`` means here."""
        serverless = not network.is_star
        if self.refine_max_iter == "auto":
            return 0 if serverless or self.objective != "kmeans" else 300
        if self.refine_max_iter and (serverless or self.objective != "kmeans"):
            why = "a graph has no server to gather the sums" if serverless else \
                "Lloyd rounds minimize the k-means cost"
            raise ValueError(f"refine_max_iter={self.refine_max_iter} needs topology=None and "
                             f"objective='kmeans' ({why}); pass refine_max_iter=0")
        return self.refine_max_iter

    def _cost(self, X, centers, labels=None, sample_weight=None) -> float:
        """The cost of ``objective`` (see the mixin): what ``inertia_`` and ``score`` report."""
        if self.objective != "kmedian":
            return super()._cost(X, centers, labels, sample_weight)
        if labels is None:
            return kmedian_cost(X, centers, sample_weight=sample_weight)
        return labelled_cost(X, centers, labels, sample_weight, objective="kmedian")

    # ----------------------------------------------------------------- Zhang et al.
    def _zhang(self, federation: Federation, rng, comm):
        network = federation.network
        if network.is_star:
            raise ValueError("construction='zhang' needs a graph over the devices (a star has "
                             "a server and no tree among the devices): pass topology=")
        tree = network if isinstance(network, SpanningTree) else \
            network.spanning_tree(random_state=rng)
        self.tree_ = tree
        return zhang_coreset(federation, tree, self.n_clusters, self.coreset_size, rng=rng,
                             comm=comm, max_iter=self.max_iter, objective=self.objective)


def _level_federation(inputs) -> Federation:
    """One level's nodes as devices: each node's rows are its input (its children's coresets,
    then its own rows)."""
    return Federation.from_devices(
        np.concatenate([x for _, x, _ in inputs]),
        np.repeat([node for node, _, _ in inputs], [len(x) for _, x, _ in inputs]),
        sample_weight=np.concatenate([w for _, _, w in inputs]),
        allow_negative_weights=True)


def _merge_local(level: Federation, federation: Federation, position: dict,
                 leaf_local: LocalSolutions, leaves: set, sub: Federation | None,
                 computed: LocalSolutions | None) -> LocalSolutions:
    """The local solutions of a level's nodes: a leaf's taken from ``leaf_local`` (of
    ``federation``; a leaf's rows in the level are its rows there, in the same order), the
    others' from ``computed`` (:func:`local_solutions` of ``sub``, the level's other nodes,
    whose rows are theirs in the level, in the same order)."""
    Z, n = level.n_devices, level.n_samples
    k, d = leaf_local.centers.shape[1:]
    dtype = leaf_local.centers.dtype if computed is None else \
        np.result_type(leaf_local.centers, computed.centers)
    centers, valid = np.zeros((Z, k, d), dtype=dtype), np.zeros((Z, k), dtype=bool)
    labels, row_costs, costs = np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(Z)
    in_sub = {} if sub is None else {int(v): i for i, v in enumerate(sub.device_ids)}
    for j, node in enumerate(level.device_ids.tolist()):
        if node in leaves:
            src, z, offsets = leaf_local, position[node], federation.offsets
        else:
            src, z, offsets = computed, in_sub[node], sub.offsets
        rows, src_rows = (slice(level.offsets[j], level.offsets[j + 1]),
                          slice(offsets[z], offsets[z + 1]))
        centers[j], valid[j], costs[j] = src.centers[z], src.valid[z], src.costs[z]
        labels[rows], row_costs[rows] = src.labels[src_rows], src.row_costs[src_rows]
    return LocalSolutions(centers=centers, valid=valid, labels=labels, row_costs=row_costs,
                          costs=costs)


# --------------------------------------------------------------------- communication
def portion_route(network: Topology, device_ids) -> Flood | FullFlood:
    """Every transmission that carries one message of every device to where the solve
    happens: the server of a star (one hop), the root of a rooted tree (``depth`` hops,
    Theorem 3), every node of any other graph (Message-Passing, Algorithm 3: each message
    crosses each edge twice; a :class:`~fedclust.topology.FullFlood`, its edges and rounds
    in closed form). Message ``m`` starts at ``device_ids[m]``."""
    ids = np.asarray(device_ids, dtype=np.int64)
    if network.is_star:
        n = len(ids)
        return Flood(sender=ids, receiver=np.full(n, SERVER, dtype=np.int64),
                     message=np.arange(n, dtype=np.int64), round=np.ones(n, dtype=np.int64),
                     sources=ids, n_rounds=1)
    if isinstance(network, SpanningTree):
        return network.to_root(ids)
    return network.full_flood(ids)


def send_portions(comm: Communication, route: Flood | FullFlood, sizes, kind: str,
                  floats_per: int) -> int:
    """Record on ``comm`` the messages of ``route`` carrying ``sizes[m]`` items of
    ``floats_per`` floats each (a message of no item is not sent) and their rounds; returns
    the items over hops (the paper's "points transmitted")."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if isinstance(route, FullFlood):
        # every non-empty portion over every directed edge: one ledger row per edge
        sent = sizes > 0
        comm.send_bundled(kind, route.sender, route.receiver, messages=int(sent.sum()),
                          floats=int(sizes.sum()) * floats_per)
        comm.add_rounds(int(route.rounds[sent].max(initial=0)))
        return int(sizes.sum()) * len(route.sender)
    carried = sizes[route.message]
    sent = carried > 0
    comm.send(kind, route.sender[sent], route.receiver[sent],
              floats=carried[sent] * floats_per)
    star = bool(len(route.receiver)) and bool((route.receiver == SERVER).all())
    comm.add_rounds(1 if star else int(route.round[sent].max(initial=0)))
    return int(carried[sent].sum())


def broadcast_costs(network: Topology, device_ids, comm: Communication) -> None:
    """Algorithm 1, round 1 (Algorithm 2 over a graph): every node learns every local cost,
    one float each. On a star the server gathers them and returns their sum; on a rooted tree
    they climb to the root, which sends the sum back down; on any other graph they are
    flooded (the paper's ``O(mn)`` scalars)."""
    ids = np.asarray(device_ids, dtype=np.int64)
    send_portions(comm, portion_route(network, ids), np.ones(len(ids), dtype=np.int64),
                  "local_cost", 1)
    if network.is_star:
        comm.send("total_cost", SERVER, ids, floats=1)
        comm.add_rounds(1)
    elif isinstance(network, SpanningTree):
        down = network.flood([network.root], echo=False)
        comm.send("total_cost", down.sender, down.receiver, floats=1)
        comm.add_rounds(down.n_rounds)


# --------------------------------------------------------------------- Zhang et al.
def zhang_coreset(federation: Federation, tree: SpanningTree, n_clusters: int,
                  coreset_size: int, *, rng, comm: Communication, max_iter: int = 300,
                  objective: str = "kmeans", leaf_local: LocalSolutions | None = None):
    """Zhang et al.'s coresets merged up a rooted tree, level by level (every level's nodes in
    one batched construction): every node builds a coreset of ``coreset_size / n`` drawn
    points (and its local centers) of its own rows together with its children's coresets, and
    sends it to its parent (one message per node, counted on ``comm``, with the note
    ``points_transmitted``).

    ``leaf_local``: :func:`fedclust.coreset.local_solutions` of ``federation`` computed with the
    same ``max_iter`` and ``objective``, to take a leaf's local solution from (a leaf's input is
    its own rows alone, the input of Algorithm 1's step 1): every coreset size of a run then
    shares its leaves' solutions, as the distributed coreset and COMBINE share theirs; None
    computes them here.

    Returns
    -------
    coreset : Coreset
        The root's input: its rows and its children's coresets, uncompressed.
    costs : ndarray of shape (n_devices,)
        The cost of every node's local solution of its combined input (sorted device order);
        NaN for the root, which builds none.
    """
    k, d, Z = n_clusters, federation.n_features, federation.n_devices
    share = dict(zip(federation.node_ids.tolist(),
                     equal_shares(coreset_size, Z).tolist(), strict=True))
    position = {int(v): z for z, v in enumerate(federation.node_ids)}
    received: dict[int, list[Coreset]] = {}
    costs = np.zeros(Z)
    points_sent = 0
    by_depth: dict[int, list[int]] = {}
    # nodes whose input is their own rows alone: no child sends them a coreset
    leaf_nodes = set(position) - {int(tree.parent[node]) for node in tree.depth
                                  if node != SERVER and node != tree.root}
    for node, depth in tree.depth.items():
        if node != SERVER:
            by_depth.setdefault(depth, []).append(int(node))
    for depth in sorted(by_depth, reverse=True):
        if depth == 0:
            break  # the root compresses nothing: it sends nothing
        inputs = []
        for node in sorted(by_depth[depth]):
            parts = received.pop(node, [])
            X = [c.points for c in parts]
            w = [c.weights for c in parts]
            if node in position:
                z = position[node]
                X.append(federation.device_data(z))
                rows = slice(federation.offsets[z], federation.offsets[z + 1])
                w.append(federation.row_weights[rows])
            if X:
                inputs.append((node, np.concatenate(X), np.concatenate(w)))
        if not inputs:
            continue
        level = _level_federation(inputs)
        leaves = set() if leaf_local is None else {
            node for node, _, _ in inputs if node in leaf_nodes}
        if leaves:
            rest = [entry for entry in inputs if entry[0] not in leaves]
            sub = _level_federation(rest) if rest else None
            local = _merge_local(level, federation, position, leaf_local, leaves, sub,
                                 None if sub is None else local_solutions(
                                     sub, k, random_state=rng, max_iter=max_iter,
                                     objective=objective))
        else:
            local = local_solutions(level, k, random_state=rng, max_iter=max_iter,
                                    objective=objective)
        # t / n draws per node holding data (a relay node without data: the same)
        shares = np.array([share.get(int(v), coreset_size // max(Z, 1))
                           for v in level.device_ids])
        coreset = sample_coreset(level, local, shares, random_state=rng)
        for z, node in enumerate(level.device_ids):
            mine = coreset.source == z
            portion = Coreset(points=coreset.points[mine], weights=coreset.weights[mine],
                              source=np.zeros(int(mine.sum()), dtype=np.int64),
                              is_center=coreset.is_center[mine])
            if int(node) in position:
                costs[position[int(node)]] = local.costs[z]
            parent = tree.parent[int(node)]
            received.setdefault(parent, []).append(portion)
            comm.send("coreset", int(node), parent, floats=portion.size * (d + 1))
            points_sent += portion.size
    # the root solves on its whole input, its rows and its children's coresets: compressing
    # what it does not send would only lose accuracy (not in the paper, which says only that
    # the root solves on what it has)
    parts = received.pop(tree.root, [])
    points = [c.points for c in parts]
    weights = [c.weights for c in parts]
    is_center = [c.is_center for c in parts]
    if tree.root in position:
        z = position[tree.root]
        rows = slice(federation.offsets[z], federation.offsets[z + 1])
        points.append(federation.device_data(z))
        weights.append(federation.row_weights[rows])
        is_center.append(np.zeros(rows.stop - rows.start, dtype=bool))
        costs[z] = np.nan  # the root computes no local solution
    if not points:
        raise ValueError(f"the root {tree.root} of {tree.name!r} received no data")
    total = sum(len(p) for p in points)
    root_coreset = Coreset(points=np.concatenate(points), weights=np.concatenate(weights),
                           source=np.zeros(total, dtype=np.int64),
                           is_center=np.concatenate(is_center))
    comm.add_rounds(tree.height)
    comm.note("points_transmitted", points_sent)
    return root_coreset, costs

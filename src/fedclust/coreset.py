"""Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013): the construction itself.

Algorithm 1 builds a weighted set whose weighted k-means (or k-median) cost approximates the
data's for every set of centers, without moving data: every node solves its own points
(:func:`local_solutions`, step 1), draws ``t_i`` points in proportion to its local cost
(:func:`proportional_shares`; COMBINE's equal shares: :func:`equal_shares`) and weighs them
and its centers (:func:`sample_coreset`, steps 2-3). Each step as implemented, with the weight
the algorithm box misprints and the signed weights of Zhang et al.'s tree, is in
``docs/algorithms.md`` (Distributed coresets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._jit import njit, prange
from ._validation import check_choice, check_random_state
from .federation import Federation
from .lloyd import lloyd_by_device
from .seeding import _draw, kmeans_plusplus_by_device

__all__ = ["Coreset", "LocalSolutions", "local_solutions", "proportional_shares",
           "equal_shares", "sample_coreset", "theoretical_coreset_size",
           "theoretical_communication"]


@dataclass
class LocalSolutions:
    """Every node's constant-factor solution ``B_i`` (Algorithm 1, step 1).

    Attributes
    ----------
    centers : ndarray of shape (n_devices, k, d)
    valid : ndarray of shape (n_devices, k) of bool
        False pads a node with fewer than ``k`` centers (fewer points of positive weight).
    labels : ndarray of shape (n_samples,)
        Nearest center of every row (sorted-row order): its cell ``P_b``.
    row_costs : ndarray of shape (n_samples,)
        ``m_p``, the cost of every row at its nearest center: the squared distance (k-means)
        or the distance (k-median).
    costs : ndarray of shape (n_devices,)
        ``M_i = sum_p |v_p| m_p``, what each node shares.
    """

    centers: np.ndarray
    valid: np.ndarray
    labels: np.ndarray
    row_costs: np.ndarray
    costs: np.ndarray


@dataclass
class Coreset:
    """A weighted point set and which node contributed each point.

    Attributes
    ----------
    points : ndarray of shape (size, d)
    weights : ndarray of shape (size,)
        Real weights (negative ones possible on centers).
    source : ndarray of shape (size,)
        Position (sorted device order) of the node whose portion holds the point.
    is_center : ndarray of shape (size,) of bool
        True for a center of ``B_i``, False for a sampled (or sent as is) point.
    """

    points: np.ndarray
    weights: np.ndarray
    source: np.ndarray
    is_center: np.ndarray

    @property
    def size(self) -> int:
        return len(self.weights)

    def portion_sizes(self, n_devices: int) -> np.ndarray:
        """Points in every node's portion ``D_i``."""
        return np.bincount(self.source, minlength=n_devices)


def local_solutions(federation: Federation, n_clusters: int, *, random_state=None,
                    max_iter: int = 300, objective: str = "kmeans") -> LocalSolutions:
    """Algorithm 1, step 1 on every node: ``k`` centers by k-means++ seeding and Lloyd's
    refinement (the paper leaves the constant-factor algorithm open; k-means++ alone is an
    ``O(log k)`` approximation in expectation, Lloyd only lowers its cost), weighted by the
    rows' weights. A node with at most ``k`` points of positive weight takes them all (none,
    when all its points weigh 0).

    ``objective="kmedian"``: ``D`` seeding (also ``O(log k)`` for the k-median cost) and
    k-median Lloyd; ``row_costs`` are then the distances ``m_p = d(p, B_i)`` (Algorithm 1 for
    k-median; the proof of Lemma 2 samples by ``m_p = d(p, b_p)``) and ``costs`` their sums
    ``M_i = sum_p |v_p| m_p``.
    """
    check_choice(objective, "objective", {"kmeans", "kmedian"})
    w = federation.weights
    positive = np.bincount(federation.device_of_row, weights=federation.row_weights > 0,
                           minlength=federation.n_devices).astype(np.int64)
    weighted = np.bincount(federation.device_of_row, weights=federation.row_weights != 0,
                           minlength=federation.n_devices)
    if ((positive == 0) & (weighted > 0)).any():
        z = int(np.flatnonzero((positive == 0) & (weighted > 0))[0])
        raise ValueError(f"device {federation.device_ids[z]} has no point of positive weight: "
                         f"it has no local solution to build a coreset portion from")
    per_device = np.minimum(n_clusters, positive)
    rows = kmeans_plusplus_by_device(federation, per_device, random_state=random_state,
                                     power=2 if objective == "kmeans" else 1)
    valid = rows >= 0
    init = federation.X[np.maximum(rows, 0)]
    result = lloyd_by_device(federation, init, center_mask=valid, max_iter=max_iter, weights=w,
                             objective=objective)
    # m_p = cost(p, B_i): d^2 for k-means, d for k-median (sq_distances are squared for both)
    row_costs = result.sq_distances.astype(np.float64)
    if objective == "kmedian":
        row_costs = np.sqrt(row_costs)
    # a node whose points all weigh 0 has no centers (its distances are infinite): it costs 0
    # and so gets no share; its portion is empty
    row_costs[federation.row_weights == 0] = 0.0
    costs = np.bincount(federation.device_of_row,
                        weights=np.abs(federation.row_weights) * row_costs,
                        minlength=federation.n_devices)
    return LocalSolutions(centers=result.centers, valid=valid, labels=result.labels,
                          row_costs=row_costs, costs=costs)


def _largest_remainder(quotas: np.ndarray, total: int) -> np.ndarray:
    """Integers that add up to ``total``, each the floor of its quota or one more (the
    largest fractional parts round up; ties to the lower index)."""
    floors = np.floor(quotas).astype(np.int64)
    short = int(total - floors.sum())
    if short > 0:
        order = np.argsort(-(quotas - floors), kind="stable")
        floors[order[:short]] += 1
    return floors


def proportional_shares(total: int, costs: np.ndarray) -> np.ndarray:
    """Algorithm 1, step 2: ``t_i = t M_i / sum_j M_j``, rounded by largest remainder so that
    the shares add up to ``t`` (the paper does not say how ``t_i`` is rounded). A node of cost
    0 (every point on a center) gets no share; all-zero costs give every share 0."""
    costs = np.asarray(costs, dtype=np.float64)
    if costs.sum() <= 0:
        return np.zeros(len(costs), dtype=np.int64)
    return _largest_remainder(total * costs / costs.sum(), total)


def equal_shares(total: int, n_devices: int) -> np.ndarray:
    """COMBINE's shares: ``t / n`` points per node (largest remainder: they add up to ``t``)."""
    return _largest_remainder(np.full(n_devices, total / n_devices), total)


@njit(parallel=True, cache=True)
def _draw_kernel(mass, offsets, draw_offsets, uniforms, rows):  # pragma: no cover (compiled)
    for z in prange(len(offsets) - 1):
        first, count = draw_offsets[z], draw_offsets[z + 1] - draw_offsets[z]
        if count == 0:
            continue
        # the node's own cumulative mass: another node's scale cannot swallow it
        cumulative = np.cumsum(mass[offsets[z]:offsets[z + 1]])
        for j in range(count):
            rows[first + j] = offsets[z] + _draw(cumulative, uniforms[first + j])


def _draw_rows(federation: Federation, mass: np.ndarray, shares: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """``shares[i]`` rows of every node i.i.d. with probability proportional to ``mass`` (of
    positive total on every node with a share), all nodes at once (sorted-row indices,
    grouped by node)."""
    draw_offsets = np.concatenate([[0], np.cumsum(shares)]).astype(np.int64)
    uniforms = 1.0 - rng.random(int(draw_offsets[-1]))  # in (0, 1], as _draw needs
    rows = np.empty(len(uniforms), dtype=np.int64)
    _draw_kernel(mass, federation.offsets, draw_offsets, uniforms, rows)
    return rows


def sample_coreset(federation: Federation, local: LocalSolutions, shares: np.ndarray, *,
                   random_state=None) -> Coreset:
    """Algorithm 1, step 2 on every node: the portions ``S_i cup B_i`` and their weights.

    Parameters
    ----------
    federation : Federation
        The nodes' points (and their weights, possibly signed).
    local : LocalSolutions
        :func:`local_solutions` of ``federation``.
    shares : ndarray of int, shape (n_devices,)
        ``t_i``, the points each node draws (:func:`proportional_shares`,
        :func:`equal_shares`). A node with at most ``t_i`` points sends its points as they
        are; a node of cost 0 (or share 0) sends its centers alone.
    random_state : int, Generator or None

    Returns
    -------
    Coreset
    """
    rng = check_random_state(random_state)
    Z, k = local.valid.shape
    v = federation.row_weights
    shares = np.asarray(shares, dtype=np.int64)
    whole = federation.device_sizes <= shares
    # a node of cost 0 has every point on a center: its centers alone are exact
    draws = np.where(whole | (local.costs <= 0), 0, shares)
    mass = np.abs(v) * local.row_costs
    rows = _draw_rows(federation, np.where(draws[federation.device_of_row] > 0, mass, 0.0),
                      draws, rng)
    owner = federation.device_of_row[rows]
    sample_w = np.sign(v[rows]) * local.costs[owner] / (draws[owner] * local.row_costs[rows])
    # w_b = (weight of the cell) - (weight drawn from it), for the nodes that compress
    cell = federation.device_of_row * k + local.labels
    center_w = (np.bincount(cell, weights=v, minlength=Z * k)
                - np.bincount(cell[rows], weights=sample_w, minlength=Z * k)).reshape(Z, k)
    keep_center = local.valid & ~whole[:, None]
    center_node, center_slot = np.nonzero(keep_center)
    sent_whole = np.flatnonzero(whole[federation.device_of_row])
    points = np.concatenate([federation.X[sent_whole], federation.X[rows],
                             local.centers[center_node, center_slot]])
    weights = np.concatenate([v[sent_whole], sample_w, center_w[center_node, center_slot]])
    source = np.concatenate([federation.device_of_row[sent_whole], owner, center_node])
    is_center = np.r_[np.zeros(len(sent_whole) + len(rows), dtype=bool),
                      np.ones(len(center_node), dtype=bool)]
    order = np.argsort(source, kind="stable")  # portions contiguous, node by node
    return Coreset(points=points[order], weights=weights[order], source=source[order],
                   is_center=is_center[order])


def theoretical_coreset_size(n_clusters: int, n_features: int, n_devices: int, *,
                             epsilon: float, delta: float, objective: str = "kmeans",
                             constant: float = 1.0) -> float:
    """The coreset size Theorem 1 asks for, with the constant its O() hides set to
    ``constant`` (the paper gives none; 1 is our choice, stated wherever a size is compared
    with it).

    k-means: ``(kd + log(1/delta)) / epsilon^4 + nk log(nk / delta)``;
    k-median: ``(kd + log(1/delta)) / epsilon^2 + nk``. Algorithm 2 builds an
    ``epsilon / 2``-coreset for a ``(1 + epsilon) alpha`` solution: pass ``epsilon / 2``.

    Examples
    --------
    >>> round(theoretical_coreset_size(50, 90, 100, epsilon=0.1, delta=0.1))
    45077125
    """
    k, d, n = n_clusters, n_features, n_devices
    if not 0 < epsilon < 1 or not 0 < delta < 1:
        raise ValueError(f"epsilon and delta must lie in (0, 1); got {epsilon}, {delta}")
    if objective == "kmeans":
        size = (k * d + np.log(1 / delta)) / epsilon**4 + n * k * np.log(n * k / delta)
    elif objective == "kmedian":
        size = (k * d + np.log(1 / delta)) / epsilon**2 + n * k
    else:
        raise ValueError(f"objective must be 'kmeans' or 'kmedian'; got {objective!r}")
    return constant * float(size)


def theoretical_communication(theoretical_size: float, network: str, *, n_edges: int,
                              tree_height: int) -> float:
    """The communication (points) Theorems 2-3 ask for: Theorem 1's coreset size times the
    number of edges on a general graph (Theorem 2, ``O(m |D|)``: flooding sends each portion
    over every edge at most twice) or times the height of a rooted tree (Theorem 3,
    ``O(h |D|)``: each portion travels at most ``h`` hops to the root).

    ``theoretical_size`` comes from :func:`theoretical_coreset_size`, whose ``constant``
    carries over (the theorems' O() hides another one, taken as 1 here: *not in the paper*).

    Examples
    --------
    >>> theoretical_communication(1000.0, "graph", n_edges=180, tree_height=9)
    180000.0
    >>> theoretical_communication(1000.0, "tree", n_edges=180, tree_height=9)
    9000.0
    """
    if network == "graph":
        return float(n_edges) * theoretical_size
    if network == "tree":
        return float(tree_height) * theoretical_size
    raise ValueError(f"network must be 'graph' or 'tree'; got {network!r}")

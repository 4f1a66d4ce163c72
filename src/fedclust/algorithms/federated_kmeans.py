"""Federated k-means: FedAvg-style clustering (Triebe & Rajagopal, 2019, Algorithm 1). Every
round the server sends its centroids to a sample of the clients, each runs mini-batch k-means
epochs on its own data, and the server steps towards their size-weighted mean;
:class:`FederatedKMeans` is the estimator. The round step by step, what the paper leaves open and
how it is read here, the defaults and what they were measured to give: docs/algorithms.md,
*Federated k-means*.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..communication import SERVER
from ..lloyd import SegmentSteps, assign, lloyd_step_by_segment, squared_norms, squared_shift
from ..rounds import (
    RoundState,
    aggregate_centers,
    n_participants,
    round_history,
    sample_participants,
)
from ..seeding import SEEDINGS, initial_centers
from ._base import POSITIVE_INT, TOL, FederatedClusteringMixin, data_tolerance, warn_not_converged

__all__ = ["FederatedKMeans", "ServerState"]

_MOMENTUM_STYLES = ("ema", "heavy_ball")
_REASSIGN_BASES = ("all", "round")


class FederatedKMeans(FederatedClusteringMixin):
    """Federated k-means of Triebe & Rajagopal (2019): sampled clients run mini-batch k-means
    epochs from the server's centroids; the server averages their centroids by cluster size.

    Parameters
    ----------
    n_clusters : int, default=8
        ``K``.
    sample_fraction : float in (0, 1], default=1.0
        ``C``: ``max(floor(C M), 1)`` of the ``M`` clients take part in each round (so for
        ``M = 50`` both ``C = 0.01`` and ``C = 0.03`` give one client). The paper sweeps
        0.01 to 1 (0.1 in Figs 4-5); the default takes every client (see Defaults above).
    local_epochs : int, default=1
        ``E``: passes over its data a sampled client makes per round.
    batch_size : int or None, default=None
        ``B``: rows per client mini-batch; None is the paper's ``B = infinity`` (full batch).
    server_lr : float, default=1.0
        ``alpha``, the server's step towards the clients' average.
    server_momentum : float in [0, 1) or None, default=0.5
        ``mu`` of the server momentum (the second number of the paper's ``alpha = (1, 0.5)``,
        read from the authors' code); None or 0 steps without momentum (Algorithm 1 as printed).
    server_momentum_style : {"ema", "heavy_ball"}, default="ema"
        ``"ema"``: ``v <- mu v + (1 - mu) u`` (the authors' code); ``"heavy_ball"``:
        ``v <- mu v + u``.
    client_lr : float, default=1.0
        ``beta``, the client's step towards each batch's means.
    n_rounds : int, default=200
        ``T``: rounds at most (exactly ``T`` with ``tol=None``); a fit that reaches it before
        converging warns (``ConvergenceWarning``).
    tol : float or None, default=1e-4
        Convergence (not in the paper) when the clients' aggregate of a round lies within
        ``tol`` times the mean feature variance of the centroids it updates (the sum of the
        squared distances, :class:`ServerState`'s ``gap``: with every client and a full batch,
        the shift of a Lloyd step, as scikit-learn's ``KMeans`` tests it, whatever the
        server's rate and momentum), the server's momentum has as little left (the squared
        norm of its velocity), and no cluster is starved (counting towards its
        re-initialization) or re-initialized; the variance costs ``d + 2`` floats
        up from every client, once (kind ``data_moments``). None: exactly ``T`` rounds, the
        paper's Algorithm 1.
    init : {"greedy-k-means++", "k-means++", "uniform", "random"} or ndarray
        Default ``"greedy-k-means++"``: the federated greedy k-means++ (scikit-learn's
        seeding without moving data, ``2 K + 1`` rounds); ``"k-means++"``: exact k-means++
        (``2 K`` rounds); ``"random"``: ``K`` random rows (all three from
        :func:`fedclust.seeding.initial_centers`); ``"uniform"`` (the paper's "randomly"):
        uniform in the box ``init_bounds``; an array of shape (n_clusters, n_features) is used
        as given.
    init_bounds : (float, float) or None, default=None
        Low and high of the box of ``"uniform"`` starts and of re-initialized clusters (the
        authors' synthetic runs use ``(0, K + 1)``); None takes every feature's data range.
    reassign_fraction : float or "auto", default="auto"
        A cluster smaller than this fraction of all clients' rows (weight) ... (Sec. 2.3
        prints 0.01; ``"auto"``, not in the paper: ``0.05 / K``, a twentieth of an average
        cluster's share, which is the paper's 0.01 at its ``K = 5`` and does not starve every
        cluster once ``K`` exceeds 100)
    reassign_after : int or None, default=20
        ... for this many consecutive rounds is re-initialized; None never re-initializes.
    reassign_basis : {"all", "round"}, default="all"
        The rows the fraction is of: ``"all"``, every client's (Sec. 2.3 as printed);
        ``"round"``, the rows the round's sampled clients clustered (the authors' code).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The server's centroids after the last round.
    labels_ : ndarray of shape (n_samples,)
        Nearest centroid of every training row (``predict(X)``).
    inertia_ : float
    n_iter_ : int
        The rounds run: ``T``, or fewer when converged.
    converged_ : bool
        Whether the convergence test (``tol``) held; False with ``tol=None``.
    n_participants_ : int
        ``m``, clients per round.
    n_reassigned_ : int
        Clusters re-initialized over all rounds.
    history_ : dict of ndarray
        One row per round ``t = 1..T`` (:func:`fedclust.rounds.round_history`): ``round``,
        ``aggregated`` (always True), ``participants`` (``m``), then ``points``
        (``sum Lambda``, the sampled clients' last-epoch rows), ``clusters_seen`` (clusters
        with ``Lambda > 0``) and ``reassigned`` (clusters re-initialized after the round).
        Pass a ``callback`` to ``fit`` (e.g. :class:`fedclust.rounds.History`) to evaluate
        the centroids every round.
    communication_ : Communication
        The one-off reports (``feature_range``: ``2 d`` floats per client when the box comes
        from the data; ``client_sizes``: one integer per client when reassignment is on
        the paper's basis), the seeding's messages, and per round ``K d`` floats down to
        every sampled client (``centers``) and ``K d`` floats and ``K`` counts up from it
        (``client_centers``, ``client_counts``; floats when weighted).

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import FederatedKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(1, 0.2, (50, 1)), rng.normal(3, 0.2, (50, 1))]
    >>> devices = np.repeat(np.arange(10), 10)     # every client holds one Gaussian
    >>> km = FederatedKMeans(2, n_rounds=30, random_state=0).fit(X, devices=devices)
    >>> np.sort(km.cluster_centers_.ravel()).round(1).tolist()
    [1.0, 3.0]
    >>> km.converged_, km.n_iter_, km.n_participants_  # stopped by tol before round 30
    (True, 11, 10)
    >>> int(km.communication_.total("centers"))   # 11 rounds x 10 clients x K d
    220
    >>> paper = FederatedKMeans(2, sample_fraction=0.5, init="uniform", init_bounds=(0, 3),
    ...                         n_rounds=30, random_state=0).fit(X, devices=devices)  # Algorithm 1
    >>> np.sort(paper.cluster_centers_.ravel()).round(1).tolist(), paper.n_participants_
    ([1.0, 3.0], 5)
    """

    _reports_rounds = True

    _parameter_constraints: dict = {
        **FederatedClusteringMixin._parameter_constraints,
        "sample_fraction": [Interval(Real, 0, 1, closed="right")],
        "local_epochs": [POSITIVE_INT],
        "batch_size": [POSITIVE_INT, None],
        "server_lr": [Interval(Real, 0, 2, closed="right")],
        "server_momentum": [Interval(Real, 0, 1, closed="left"), None],
        "server_momentum_style": [StrOptions(set(_MOMENTUM_STYLES))],
        "client_lr": [Interval(Real, 0, 2, closed="right")],
        "n_rounds": [POSITIVE_INT],
        "tol": [TOL, None],
        "init": [StrOptions({"uniform", *SEEDINGS}), "array-like"],
        "init_bounds": ["array-like", None],
        "reassign_fraction": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "reassign_after": [POSITIVE_INT, None],
        "reassign_basis": [StrOptions(set(_REASSIGN_BASES))],
    }

    def __init__(self, n_clusters=8, *, sample_fraction=1.0, local_epochs=1, batch_size=None,
                 server_lr=1.0, server_momentum=0.5, server_momentum_style="ema",
                 client_lr=1.0, n_rounds=200, tol=1e-4, init="greedy-k-means++",
                 init_bounds=None,
                 reassign_fraction="auto", reassign_after=20, reassign_basis="all",
                 random_state=None):
        self.n_clusters = n_clusters
        self.sample_fraction = sample_fraction
        self.local_epochs = local_epochs
        self.batch_size = batch_size
        self.server_lr = server_lr
        self.server_momentum = server_momentum
        self.server_momentum_style = server_momentum_style
        self.client_lr = client_lr
        self.n_rounds = n_rounds
        self.tol = tol
        self.init = init
        self.init_bounds = init_bounds
        self.reassign_fraction = reassign_fraction
        self.reassign_after = reassign_after
        self.reassign_basis = reassign_basis
        self.random_state = random_state

    def _check_params(self):
        # the box must be one (a relation between its two ends)
        if self.init_bounds is not None:
            low, high = _bounds(self.init_bounds)
            if not low < high:
                raise ValueError(f"init_bounds must be (low, high) with low < high; got "
                                 f"{self.init_bounds!r}")

    # ------------------------------------------------------------------ fit
    def _fit(self, federation, rng, comm, callback):
        X, w = federation.X, federation.weights
        Z, k, d = federation.n_devices, self.n_clusters, federation.n_features
        clients = np.arange(Z)
        reassigning = self.reassign_after is not None
        low, high, reported = self._box(federation, comm)
        # the paper's basis needs every client's size once; the round's basis is the counts
        # the sampled clients send anyway
        reassigning_on_all = reassigning and self.reassign_basis == "all"
        if reassigning_on_all:
            comm.send("client_sizes", clients, SERVER, **({"ints": 1} if w is None
                                                         else {"floats": 1}))
        if reported or reassigning_on_all:
            comm.add_rounds(1)  # the one-off reports travel together
        if isinstance(self.init, str) and self.init == "uniform":
            centers = low + (high - low) * rng.random((k, d))
        else:
            centers = initial_centers(self.init, federation, k, rng, comm)
        state = self.server_state(centers, low, high, float(federation.row_weights.sum()))
        tol = data_tolerance(federation, self.tol, comm)
        T = self.n_rounds
        history = round_history(T, points=float, clusters_seen=np.int64, reassigned=np.int64)
        history["aggregated"][:] = True  # every round ends with the server's Gamma*
        counts = {"ints": k} if w is None else {"floats": k}
        x_sq = squared_norms(X) if callback is not None else None
        self._report(callback, 0, state.centers, federation, x_sq, None)

        converged = False
        t = 0
        for t in range(1, T + 1):  # noqa: B007 (the count is kept after the loop)
            sampled = sample_participants(Z, self.sample_fraction, rng)
            comm.send("centers", SERVER, sampled, floats=k * d)
            sizes, client_centers = self.client_step(federation, sampled, state.centers, rng)
            comm.send("client_centers", sampled, SERVER, floats=k * d)
            comm.send("client_counts", sampled, SERVER, **counts)
            comm.add_rounds(1)
            self.server_step(state, sizes, client_centers, rng, history, t)
            self._report(callback, t, state.centers, federation, x_sq, sampled)
            # a starved cluster still counts towards its re-initialization: not settled
            settled = state.gap <= tol and squared_shift(0.0, state.velocity) <= tol
            if self.tol is not None and settled and not state.below.any() \
                    and not history["reassigned"][t - 1]:
                converged = True
                break

        T = t
        history = {name: column[:T] for name, column in history.items()}
        centers = state.centers
        self.cluster_centers_ = centers.astype(X.dtype, copy=False)
        self.labels_ = federation.to_original_order(assign(X, self.cluster_centers_)[0])
        self.n_iter_ = T
        self.converged_ = converged
        if self.tol and not converged:
            warn_not_converged(self, "n_rounds", self.n_rounds)
        self.n_participants_ = n_participants(Z, self.sample_fraction)
        self.n_reassigned_ = int(history["reassigned"].sum())
        self.history_ = history

    def server_state(self, centers, low, high, all_rows) -> ServerState:
        """The server's state before round 1 (step API: what ``fit`` and a deployment's
        server start from).

        Parameters
        ----------
        centers : ndarray of shape (n_clusters, n_features)
            The initial centroids (kept in float64).
        low, high : ndarray of shape (n_features,) or None
            The box that re-initializations draw from (None without reassignment).
        all_rows : float
            Every client's rows (or weight) in all: the paper's reassignment basis.

        Returns
        -------
        ServerState
            No velocity and no starved rounds yet.
        """
        centers = np.array(centers, dtype=np.float64)
        return ServerState(centers=centers, velocity=np.zeros_like(centers),
                            below=np.zeros(self.n_clusters, dtype=np.int64), low=low,
                            high=high, all_rows=all_rows)

    def server_step(self, state, sizes, client_centers, rng, history, t):
        """Algorithm 1's server update of round ``t`` from the clients that answered (step
        API: ``fit`` and a deployment's server, :mod:`fedclust.runtime.flower`, both run it).

        ``Gamma*`` cluster by cluster (a cluster no client saw keeps its centroid), the step
        with rate and momentum, and the reassignment of starved clusters.

        Parameters
        ----------
        state : ServerState
            Updated in place (:meth:`server_state` makes the first).
        sizes : ndarray of shape (m, n_clusters)
            The answering clients' last-epoch cluster sizes, in the order they were sampled.
        client_centers : ndarray of shape (m, n_clusters, n_features)
            Their centroids (:meth:`client_step`).
        rng : numpy.random.Generator
            Draws the re-initializations.
        history : dict of ndarray
            Row ``t - 1`` is filled in place (participants, points, clusters seen,
            reassigned).
        t : int
            The round, from 1.
        """
        centers, velocity = state.centers, state.velocity
        target, totals = aggregate_centers(client_centers, sizes, centers)
        seen = totals > 0
        state.gap = squared_shift(centers[seen], target[seen])
        step = self.server_lr * (target - centers)
        mu = self.server_momentum or 0.0
        if self.server_momentum_style == "ema":
            velocity[seen] = mu * velocity[seen] + (1 - mu) * step[seen]
        else:
            velocity[seen] = mu * velocity[seen] + step[seen]
        centers[seen] += velocity[seen]
        history["participants"][t - 1] = len(sizes)
        history["points"][t - 1] = totals.sum()
        history["clusters_seen"][t - 1] = seen.sum()
        if self.reassign_after is not None:
            basis = state.all_rows if self.reassign_basis == "all" else float(totals.sum())
            fraction = 0.05 / self.n_clusters if self.reassign_fraction == "auto" \
                else self.reassign_fraction
            state.below = np.where(totals < fraction * basis, state.below + 1, 0)
            redo = state.below >= self.reassign_after
            if redo.any():
                low, high = state.low, state.high
                centers[redo] = low + (high - low) * rng.random((int(redo.sum()),
                                                                  centers.shape[1]))
                velocity[redo] = 0.0
                state.below[redo] = 0
                history["reassigned"][t - 1] = redo.sum()

    def _box(self, federation, comm):
        """The uniform box ``(low, high, reported)``: ``init_bounds``, or every feature's data
        range, which each client reports when a uniform start or a re-initialization needs
        it (``reported``)."""
        if self.init_bounds is not None:
            low, high = _bounds(self.init_bounds)
            return np.float64(low), np.float64(high), False
        needed = (isinstance(self.init, str) and self.init == "uniform") \
            or self.reassign_after is not None
        if not needed:
            return None, None, False
        comm.send("feature_range", np.arange(federation.n_devices), SERVER,
                  floats=2 * federation.n_features)
        X = federation.X
        return X.min(axis=0).astype(np.float64), X.max(axis=0).astype(np.float64), True

    def client_step(self, federation, sampled, centers, rng):
        """``ClientKMeans`` (Algorithm 1's client part) on every sampled client at once (step
        API: ``fit`` runs it on all sampled clients, a deployment's client on its own rows as
        a one-device federation).

        Each mini-batch step of all the clients is one pass of the shared kernel, every
        client against its own centroids.

        Parameters
        ----------
        federation : Federation
        sampled : ndarray of int
            Positions of the sampled clients in ``federation``.
        centers : ndarray of shape (n_clusters, n_features)
            The server's centroids of this round.
        rng : numpy.random.Generator or None
            Splits the rows into mini-batches (unused with ``batch_size=None``).

        Returns
        -------
        sizes : ndarray of shape (m, n_clusters)
            The last epoch's cluster sizes (weights, with sample weights).
        centers : ndarray of shape (m, n_clusters, n_features)
            Every sampled client's centroids.
        """
        offsets = federation.offsets
        n_rows = offsets[sampled + 1] - offsets[sampled]
        m = len(sampled)
        # the sampled clients' rows, client after client (the federation is sorted by device)
        first = np.repeat(offsets[sampled] - np.concatenate([[0], np.cumsum(n_rows)[:-1]]),
                          n_rows)
        rows = first + np.arange(n_rows.sum())
        owner = np.repeat(np.arange(m), n_rows)
        weights = federation.weights
        own = np.repeat(np.asarray(centers)[None], m, axis=0)
        beta = self.client_lr
        B = self.batch_size
        if B is None or B >= n_rows.max():
            batch_of = np.zeros(len(rows), dtype=np.int64)
            n_batches = np.ones(m, dtype=np.int64)
        else:
            # a random split of every client's rows into batches of B (ClientKMeans line 1)
            shuffled = np.lexsort((rng.random(len(rows)), owner))
            rows, owner = rows[shuffled], owner[shuffled]
            rank = np.arange(len(rows)) - np.repeat(np.cumsum(n_rows) - n_rows, n_rows)
            batch_of = rank // B
            n_batches = -(-n_rows // B)
        X = federation.X
        if n_batches.max() == 1:  # full batch: the same rows every epoch, only Gamma moves
            return self._full_batch_epochs(X[rows], np.concatenate([[0], np.cumsum(n_rows)]),
                                           None if weights is None else weights[rows], own)
        for _ in range(self.local_epochs):
            sizes = np.zeros((m, self.n_clusters))
            # a new order of every client's batches each epoch
            step = _shuffled_batch_steps(batch_of, owner, n_batches, rng)
            order = np.lexsort((owner, step))
            bounds = np.searchsorted(step[order], np.arange(int(n_batches.max()) + 1))
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
                batch = order[lo:hi]
                seg = np.concatenate([[0], np.cumsum(np.bincount(owner[batch], minlength=m))])
                _, _, means, batch_sizes = lloyd_step_by_segment(
                    X[rows[batch]], seg, own,
                    weights=None if weights is None else weights[rows[batch]])
                sizes += batch_sizes
                # Gamma <- Gamma + beta (Lambda^b / Lambda)(Gamma^b - Gamma): the batch's share
                # of the epoch's points so far; an empty cluster of the batch stays
                share = np.divide(batch_sizes, sizes, out=np.zeros_like(sizes),
                                  where=sizes > 0)
                own = own + (beta * share)[..., None] * (means - own)
        return sizes, own

    def _full_batch_epochs(self, rows, offsets, weights, own):
        """:meth:`client_step`'s epochs when every client's rows are one batch: each epoch is
        one step of the same segments (:class:`~fedclust.lloyd.SegmentSteps`), the batch's
        share of the epoch's points 1, so ``Gamma <- Gamma + beta (Gamma^b - Gamma)`` where
        the batch saw the cluster."""
        steps = SegmentSteps(rows, offsets, weights=weights)
        return steps.epochs(own, self.local_epochs, self.client_lr)

    def _report(self, callback, t, centers, federation, x_sq, sampled):
        if callback is None:
            return
        labels, sq = assign(federation.X, centers.astype(federation.X.dtype, copy=False),
                            x_sq=x_sq)
        cost = float(sq @ federation.row_weights)
        callback(RoundState(round=t, centers=centers.copy(), aggregated=t > 0, objective=cost,
                            global_objective=cost, participants=sampled, sorted_labels=labels,
                            order=federation.order))


@dataclass
class ServerState:
    """What the server of :class:`FederatedKMeans` keeps between rounds; ``gap`` is the
    last round's sum over the clusters the clients saw of the squared distance from the
    clients' aggregate to the centroid it updated (the convergence test's measure: a Lloyd
    step's length with every client and a full batch, whatever the server's rate and
    momentum)."""

    centers: np.ndarray
    velocity: np.ndarray
    below: np.ndarray
    low: np.ndarray | None
    high: np.ndarray | None
    all_rows: float
    gap: float = np.inf


def _bounds(bounds):
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"init_bounds must be (low, high) numbers; got {bounds!r}") from None
    return low, high


def _shuffled_batch_steps(batch_of, owner, n_batches, rng):
    """The step at which every row's batch runs: each client's batches in a random order."""
    if n_batches.max() == 1:
        return np.zeros(len(batch_of), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(n_batches)[:-1]])
    batch_owner = np.repeat(np.arange(len(n_batches)), n_batches)
    ranked = np.lexsort((rng.random(len(batch_owner)), batch_owner))
    position = np.empty(len(batch_owner), dtype=np.int64)
    position[ranked] = np.arange(len(batch_owner)) - starts[batch_owner[ranked]]
    return position[starts[owner] + batch_of]

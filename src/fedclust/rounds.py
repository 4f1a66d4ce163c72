"""What a federated round does, shared by every multi-round estimator: which devices take part
(:func:`sample_participants`), the server's count-weighted average of their centers
(:func:`aggregate_centers`), the one shape of every ``history_`` (:func:`round_history`), and
what an estimator reports to a ``fit`` callback after each round (:class:`RoundState`;
:class:`History` keeps it, so experiments evaluate rounds outside the estimator).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import check_fraction, check_int

__all__ = ["n_participants", "sample_participants", "aggregate_centers", "HISTORY_COLUMNS",
           "round_history", "RoundState", "History"]

#: The columns every multi-round estimator's ``history_`` starts with: ``round`` (``1..T``),
#: ``aggregated`` (whether the round ended with a server aggregate) and ``participants``
#: (devices that sent to the server in the round; 0 in a round of local steps only).
HISTORY_COLUMNS = ("round", "aggregated", "participants")


def n_participants(n_devices: int, fraction: float) -> int:
    """``max(floor(C M), 1)`` devices of ``M`` take part in a round with fraction ``C``.

    Examples
    --------
    >>> from fedclust.rounds import n_participants
    >>> n_participants(50, 0.1), n_participants(50, 0.01), n_participants(50, 0.03)
    (5, 1, 1)
    """
    M = check_int(n_devices, "n_devices", low=1)
    C = check_fraction(fraction, "fraction")
    # the small slack keeps 0.29 * 100 = 28.999999999999996 at 29
    return max(math.floor(C * M + 1e-9), 1)


def sample_participants(n_devices: int, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Positions (sorted) of the devices taking part in one round: ``max(floor(C M), 1)`` of
    the ``M`` devices drawn without replacement (McMahan et al., 2017; Triebe & Rajagopal,
    2019, Algorithm 1), so a fraction ``C`` too small for one device still gives one."""
    m = n_participants(n_devices, fraction)
    if m == n_devices:
        return np.arange(n_devices)
    return np.sort(rng.choice(n_devices, size=m, replace=False))


def aggregate_centers(device_centers: np.ndarray, weights: np.ndarray, previous: np.ndarray):
    """Each cluster's center averaged over devices, weighted by the devices' cluster weights:
    the server's step (LocalKMeans' synchronization; Triebe & Rajagopal's ``Gamma*``). A
    cluster no device saw keeps its previous center.

    Parameters
    ----------
    device_centers : ndarray of shape (n_devices, k, d)
    weights : ndarray of shape (n_devices, k)
        Points (or total weight) of every device's clusters.
    previous : ndarray of shape (k, d)
        Kept for a cluster whose total weight is zero or negative.

    Returns
    -------
    centers : ndarray of shape (k, d)
    totals : ndarray of shape (k,)
        Total weight of every cluster.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.rounds import aggregate_centers
    >>> centers = np.array([[[0.0], [5.0]], [[3.0], [9.0]]])   # 2 devices, 2 clusters
    >>> counts = np.array([[1, 0], [2, 4]])
    >>> aggregate_centers(centers, counts, np.zeros((2, 1)))[0].ravel().tolist()
    [2.0, 9.0]
    """
    weights = np.asarray(weights, dtype=np.float64)
    totals = weights.sum(axis=0)
    weighted = np.einsum("mk,mkd->kd", weights, device_centers)
    out = np.array(previous, dtype=device_centers.dtype, copy=True)
    filled = totals > 0
    out[filled] = weighted[filled] / totals[filled, None]
    return out, totals


def round_history(n_rounds: int, **columns) -> dict[str, np.ndarray]:
    """An empty ``history_`` of ``n_rounds`` rows: ``round = 1..T``, ``aggregated`` (False),
    ``participants`` (0), then one float column per entry of ``columns`` (its dtype if given).

    Rounds are 1-based as in the papers (round ``t`` is the ``t``-th exchange or local step);
    the initialization, which a ``callback`` sees as round 0, is not a round.

    Examples
    --------
    >>> from fedclust.rounds import round_history
    >>> history = round_history(3, points=float)
    >>> list(history), history["round"].tolist()
    (['round', 'aggregated', 'participants', 'points'], [1, 2, 3])
    """
    history = {"round": np.arange(1, n_rounds + 1), "aggregated": np.zeros(n_rounds, bool),
               "participants": np.zeros(n_rounds, np.int64)}
    for name, dtype in columns.items():
        if name in history:
            raise ValueError(f"history column {name!r} is one of the shared ones")
        history[name] = np.zeros(n_rounds, dtype=dtype)
    return history


@dataclass
class RoundState:
    """What an estimator reports to a ``fit(..., callback=)`` after each round.

    Attributes
    ----------
    round : int
        ``0`` is the initialization, then ``1, 2, ...``.
    centers : ndarray of shape (k, d)
        The global model after this round (for LocalKMeans between synchronizations: the
        count-weighted aggregate of the machines' current centers, the model the server would
        hold if it synchronized now).
    aggregated : bool
        Whether the round ended with a server aggregation.
    objective : float
        (Weighted) k-means cost of every row under the centers its device currently holds.
    global_objective : float
        (Weighted) k-means cost of every row under ``centers``.
    device_centers : ndarray of shape (n_devices, k, d) or None
        The centers each device holds.
    participants : ndarray or None
        Positions of the devices that took part in the round.
    """

    round: int
    centers: np.ndarray
    aggregated: bool
    objective: float
    global_objective: float
    device_centers: np.ndarray | None = None
    participants: np.ndarray | None = None
    sorted_labels: np.ndarray | None = field(default=None, repr=False)
    order: np.ndarray | None = field(default=None, repr=False)

    @property
    def labels(self) -> np.ndarray:
        """Each row's cluster under the centers its device holds, in the input order."""
        if self.sorted_labels is None:
            raise AttributeError("this estimator reports no per-row labels")
        if self.order is None:
            return self.sorted_labels
        out = np.empty_like(self.sorted_labels)
        out[self.order] = self.sorted_labels
        return out


class History:
    """A ``fit`` callback that keeps every round's scalars, and what ``metrics`` compute.

    Parameters
    ----------
    metrics : dict of str -> callable(RoundState) -> float, optional
        Evaluated on every round, e.g. ``{"misclustering": lambda s: rate(y, s.labels)}``.
    keep_labels : bool, default=False
        Also keep every round's labels (input order).

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust import LocalKMeans
    >>> from fedclust.rounds import History
    >>> X = np.r_[np.zeros((20, 2)), np.ones((20, 2)) * 9] + np.arange(40)[:, None] * 0.01
    >>> history = History(metrics={"n_labels": lambda s: len(np.unique(s.labels))})
    >>> km = LocalKMeans(2, local_steps=2, n_iter=4, random_state=0)
    >>> km = km.fit(X, devices=np.arange(40) % 4, callback=history)
    >>> last = history.records[-1]
    >>> last["round"], last["aggregated"], last["n_labels"]
    (4, True, 2.0)
    """

    def __init__(self, metrics: dict[str, Callable[[RoundState], float]] | None = None, *,
                 keep_labels: bool = False):
        self.metrics = dict(metrics or {})
        self.keep_labels = keep_labels
        self.records: list[dict] = []
        self.labels: list[np.ndarray] = []

    def __call__(self, state: RoundState) -> None:
        record = {"round": state.round, "aggregated": bool(state.aggregated),
                  "objective": float(state.objective),
                  "global_objective": float(state.global_objective)}
        for name, metric in self.metrics.items():
            record[name] = float(metric(state))
        self.records.append(record)
        if self.keep_labels:
            self.labels.append(state.labels)

    def to_frame(self) -> pd.DataFrame:
        """One row per round."""
        return pd.DataFrame.from_records(self.records)

"""Which devices train in a round (k-FED, Sec. 4.2.2 and Fig 4): :class:`RandomBySize`, pow-d
(:class:`PowerOfChoice`) and k-FED + pow-d (:class:`KFedPowerOfChoice`, with
:func:`device_cluster_of`, the k-FED cluster of every device). Each ``select(rng, sizes,
query_losses)`` returns a :class:`Selection`; ``query_losses(ids)`` is the trainer's callback
that evaluates (and counts) the loss queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int

__all__ = ["Selection", "RandomBySize", "PowerOfChoice", "KFedPowerOfChoice",
           "device_cluster_of", "SELECTIONS"]


@dataclass
class Selection:
    """The devices of one round (positions), the candidates that were sent the model to
    report a loss (``queried``), and how many slots were filled past the cluster filter."""

    devices: np.ndarray
    queried: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    n_filled: int = 0


def _by_size(rng, sizes, n) -> np.ndarray:
    sizes = np.asarray(sizes, dtype=np.float64)
    if n > np.count_nonzero(sizes):
        raise ValueError(f"cannot draw {n} devices: only {np.count_nonzero(sizes)} hold "
                         f"training rows")
    return np.sort(rng.choice(len(sizes), size=n, replace=False, p=sizes / sizes.sum()))


class RandomBySize:
    """``m`` devices per round, without replacement, with probability proportional to size."""

    def __init__(self, m: int):
        self.m = check_int(m, "devices_per_round", low=1)

    def select(self, rng, sizes, query_losses) -> Selection:
        return Selection(_by_size(rng, sizes, self.m))


class PowerOfChoice:
    """pow-d (Cho et al., 2020, cited by k-FED l.255): draw ``d`` candidates proportionally to
    size, ask each for its local loss under the current global model, and keep the ``m`` with
    the largest losses. ``d = m`` is random selection (with loss queries). The ``d`` loss
    queries are communication (the model down, one float up), counted by the trainer."""

    def __init__(self, m: int, d: int):
        self.m = check_int(m, "devices_per_round", low=1)
        self.d = check_int(d, "candidates", low=self.m)

    def _ranked(self, rng, sizes, query_losses):
        candidates = _by_size(rng, sizes, self.d)
        losses = np.asarray(query_losses(candidates), dtype=np.float64)
        # decreasing loss; ties broken at random
        order = np.lexsort((rng.random(len(candidates)), -losses))
        return candidates, candidates[order]

    def select(self, rng, sizes, query_losses) -> Selection:
        queried, ranked = self._ranked(rng, sizes, query_losses)
        return Selection(np.sort(ranked[:self.m]), queried)


class KFedPowerOfChoice(PowerOfChoice):
    """k-FED + pow-d: pow-d whose round takes at most one device per k-FED cluster;
    ``clusters[z]`` is device ``z``'s cluster (:func:`device_cluster_of`).

    k-FED's words (Sec. 4.2.2): "further filtering out the devices coming from the same
    clusters". Read precisely (our reading): walk the candidates in decreasing loss and accept
    a device unless its cluster was already accepted this round; if the candidates span fewer
    than ``m`` clusters, fill the round with the highest-loss rejected candidates (not in the
    paper; every strategy then trains ``m`` devices a round), counted in ``n_filled``."""

    def __init__(self, m: int, d: int, clusters):
        super().__init__(m, d)
        self.clusters = np.asarray(clusters)

    def select(self, rng, sizes, query_losses) -> Selection:
        queried, ranked = self._ranked(rng, sizes, query_losses)
        cluster = self.clusters[ranked]
        first = np.zeros(len(ranked), dtype=bool)
        first[np.unique(cluster, return_index=True)[1]] = True   # highest loss of its cluster
        accepted = ranked[first][:self.m]
        n_filled = self.m - len(accepted)
        if n_filled:
            accepted = np.concatenate([accepted, ranked[~first][:n_filled]])
        return Selection(np.sort(accepted), queried, n_filled)


#: Strategy names of the config.
SELECTIONS = ("random", "powd", "kfed_powd")


def device_cluster_of(kfed, rule: str = "majority") -> np.ndarray:
    """The k-FED cluster of every device (in the order of ``kfed.device_ids_``).

    With k' = 1 a device sends one local centre and its cluster is that centre's. With
    k' > 1 (not in the paper, our definition) ``rule="majority"`` takes the global cluster
    holding most of the device's rows (the sizes of its local centres summed per global
    cluster; ties to the smaller cluster id), which is the majority of ``kfed.labels_`` on the
    device.
    """
    if rule != "majority":
        raise ValueError(f"device_cluster rule must be 'majority'; got {rule!r}")
    position = np.searchsorted(kfed.device_ids_, kfed.local_center_devices_)
    rows = np.zeros((len(kfed.device_ids_), kfed.n_clusters))
    np.add.at(rows, (position, kfed.local_center_labels_), kfed.local_center_sizes_)
    return rows.argmax(axis=1)

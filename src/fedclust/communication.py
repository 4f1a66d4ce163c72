"""The one communication ledger every estimator fills: :class:`Communication` records every
message a fit sends (its kind, sender, receiver and size in floats and integers) and keeps the
star summaries (``rounds``, ``floats_up``, ``bytes_down``, ...) and the totals per message kind
and per directed edge; :data:`SERVER` is the server's node id and :data:`LEDGER_COLUMNS` the
communication columns of every results table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = ["Communication", "SERVER", "LEDGER_COLUMNS"]

#: The communication columns of every results table (:meth:`Communication.ledger`), totals
#: over the whole fit: ``rounds``, floats up, down and in all, bytes up, down and in all.
LEDGER_COLUMNS = ("rounds", "floats_up", "floats_down", "floats", "bytes_up", "bytes_down",
                  "bytes")

#: Node id of the server (the hub of a star topology).
SERVER = -1

_SUMMARY = ("rounds", "floats_up", "floats_down", "ints_up", "ints_down", "messages_up",
            "messages_down", "bytes_up", "bytes_down")
# pending per-edge records are merged once they hold this many rows
_COMPACT_ROWS = 1 << 20


class Communication(Mapping):
    """Ledger of the messages one fit sent.

    Every message is recorded with its *kind* (what it carries, e.g. ``"local_centers"``), its
    *sender* and *receiver* (nodes of the topology; :data:`SERVER` is the server of a star) and
    its size in floats and integers. From these the ledger keeps

    * star summaries, so every table stays comparable across algorithms and topologies:
      ``rounds`` (synchronous rounds), ``floats_up`` / ``ints_up`` / ``messages_up`` /
      ``bytes_up`` (sent by devices: on a star, device to server; on a graph without a server,
      every message a node sends) and the ``*_down`` counterparts (sent by the server);
    * the totals per message kind (:meth:`by_kind`) and per directed edge (:meth:`by_edge`).

    Bytes on the wire are ``floats * float_bytes + ints * int_bytes``: 8 bytes per float for
    float64 data (4 for float32) and 8 per integer (int64 cluster ids and counts); message
    headers are not counted.

    Read it as a mapping: ``comm["rounds"]``, ``comm["floats_up"]``, ... (the star
    summaries) plus any value stored with :meth:`note` (e.g. ``seeding_rounds``).

    Parameters
    ----------
    float_bytes : int, default=8
        Bytes per float on the wire (the data's itemsize).
    int_bytes : int, default=8
        Bytes per integer on the wire.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.communication import Communication, SERVER
    >>> comm = Communication()
    >>> devices = np.arange(3)
    >>> comm.send("centers", SERVER, devices, floats=2 * 5)      # broadcast 2 centres in R^5
    >>> comm.send("sums", devices, SERVER, floats=2 * 5, ints=2)  # per-cluster sums and counts
    >>> comm.add_rounds(1)
    >>> comm["rounds"], comm["floats_up"], comm["floats_down"], comm["bytes_up"]
    (1, 30, 30, 288)
    """

    def __init__(self, *, float_bytes: int = 8, int_bytes: int = 8):
        self.float_bytes = int(float_bytes)
        self.int_bytes = int(int_bytes)
        self._totals = dict.fromkeys(_SUMMARY, 0)
        self._notes: dict = {}
        self._kinds: list[str] = []
        self._pending: list[tuple] = []
        self._pending_rows = 0
        self._edges = _empty_edges()

    # ------------------------------------------------------------------ recording
    def send(self, kind: str, sender, receiver, *, floats=0, ints=0, times: int = 1) -> None:
        """Record messages of one ``kind``.

        ``sender`` and ``receiver`` are node ids (arrays broadcast against each other: one
        server to many devices, many devices to the server, or edge lists); ``floats`` and
        ``ints`` are the size of each message (scalars or arrays of the same length);
        ``times`` repeats every message (e.g. the same message in ``times`` rounds).
        """
        times = int(times)
        if times < 0:
            raise ValueError("message sizes and repetitions must be non-negative")
        self._record(kind, sender, receiver, np.asarray(floats, dtype=np.int64) * times,
                     np.asarray(ints, dtype=np.int64) * times, times)

    def send_bundled(self, kind: str, sender, receiver, *, messages, floats=0,
                     ints=0) -> None:
        """Record ``messages`` messages of one ``kind`` per ``(sender, receiver)`` row,
        carrying ``floats`` and ``ints`` *in all* (messages of different sizes over the same
        edge, e.g. every flooded portion, without a row per message)."""
        self._record(kind, sender, receiver, floats, ints, messages)

    def _record(self, kind, sender, receiver, floats, ints, messages) -> None:
        """Add rows ``(sender, receiver)`` of ``messages`` messages carrying ``floats`` and
        ``ints`` in all."""
        arrays = [np.asarray(a, dtype=np.int64) for a in (sender, receiver, floats, ints,
                                                          messages)]
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        # one row per (sender, receiver) pair (np.full for a scalar: broadcast_to costs ~20 us
        # a call, a federated round's few messages less)
        sender, receiver, floats, ints, messages = (
            a.ravel() if a.shape == shape
            else np.full(shape, a.flat[0]).ravel() if a.size == 1
            else np.broadcast_to(a, shape).ravel() for a in arrays)
        if sender.size == 0 or not messages.any():
            return
        if (floats < 0).any() or (ints < 0).any() or (messages < 0).any():
            raise ValueError("message sizes and repetitions must be non-negative")
        if kind not in self._kinds:
            self._kinds.append(kind)
        code = self._kinds.index(kind)
        from_server = sender == SERVER
        n_down = int(np.count_nonzero(from_server))
        if n_down in (0, sender.size):  # one direction (a broadcast, or answers): no masks
            self._add_totals("down" if n_down else "up", floats, ints, messages)
        else:
            self._add_totals("down", floats[from_server], ints[from_server],
                             messages[from_server])
            self._add_totals("up", floats[~from_server], ints[~from_server],
                             messages[~from_server])
        self._pending.append((np.full(sender.size, code), sender, receiver, floats, ints,
                              messages))
        self._pending_rows += sender.size
        if self._pending_rows >= _COMPACT_ROWS:
            self._compact()

    def _add_totals(self, direction: str, floats, ints, messages) -> None:
        n_floats, n_ints = int(floats.sum()), int(ints.sum())
        self._totals[f"floats_{direction}"] += n_floats
        self._totals[f"ints_{direction}"] += n_ints
        self._totals[f"messages_{direction}"] += int(messages.sum())
        self._totals[f"bytes_{direction}"] += n_floats * self.float_bytes + n_ints * self.int_bytes

    def add_rounds(self, n: int = 1) -> None:
        """Count ``n`` more synchronous rounds."""
        self._totals["rounds"] += int(n)

    def note(self, key: str, value) -> None:
        """Store an extra value (read back as ``comm[key]``), e.g. ``seeding_rounds``."""
        if key in _SUMMARY:
            raise KeyError(f"{key!r} is a counter of the ledger; record messages instead")
        self._notes[key] = value

    def extend(self, other: Communication) -> None:
        """Add every message and round of ``other`` to this ledger."""
        edges = other._merged()
        for code, kind in enumerate(other._kinds):
            rows = edges["kind"] == code
            if not rows.any():
                continue
            if kind not in self._kinds:
                self._kinds.append(kind)
            self._pending.append((np.full(int(rows.sum()), self._kinds.index(kind)),
                                  edges["sender"][rows], edges["receiver"][rows],
                                  edges["floats"][rows], edges["ints"][rows],
                                  edges["messages"][rows]))
            self._pending_rows += int(rows.sum())
        for key in _SUMMARY:
            if key.startswith("bytes"):
                continue
            self._totals[key] += other._totals[key]
        for direction in ("up", "down"):
            self._totals[f"bytes_{direction}"] = (
                self._totals[f"floats_{direction}"] * self.float_bytes
                + self._totals[f"ints_{direction}"] * self.int_bytes)
        self._notes.update(other._notes)

    # ------------------------------------------------------------------ reading
    def __getitem__(self, key):
        if key in self._totals:
            return self._totals[key]
        return self._notes[key]

    def __iter__(self):
        yield from _SUMMARY
        yield from self._notes

    def __len__(self) -> int:
        return len(_SUMMARY) + len(self._notes)

    def __repr__(self) -> str:
        return f"Communication({dict(self)})"

    @property
    def floats(self) -> int:
        """Floats sent in all, up and down."""
        return self._totals["floats_up"] + self._totals["floats_down"]

    @property
    def bytes(self) -> int:
        """Bytes sent in all, up and down."""
        return self._totals["bytes_up"] + self._totals["bytes_down"]

    def total(self, kind: str, unit: str = "floats") -> int:
        """``unit`` (``floats``, ``ints``, ``messages`` or ``bytes``) sent in messages of
        ``kind`` (0 when none was sent)."""
        if unit not in ("floats", "ints", "messages", "bytes"):
            raise ValueError(f"unit must be floats, ints, messages or bytes; got {unit!r}")
        edges = self.by_edge()
        return int(edges.loc[edges["kind"] == kind, unit].sum())

    def ledger(self) -> dict[str, float]:
        """The :data:`LEDGER_COLUMNS` of this fit, as floats: what every results table records
        about communication, under the same names.

        Examples
        --------
        >>> from fedclust.communication import LEDGER_COLUMNS, Communication, SERVER
        >>> comm = Communication()
        >>> comm.send("sums", [0, 1], SERVER, floats=3, ints=1)
        >>> comm.add_rounds(1)
        >>> ledger = comm.ledger()
        >>> list(ledger) == list(LEDGER_COLUMNS)
        True
        >>> ledger["floats_up"], ledger["floats"], ledger["bytes_up"], ledger["bytes"]
        (6.0, 6.0, 64.0, 64.0)
        """
        totals = {**self._totals, "floats": self.floats, "bytes": self.bytes}
        return {key: float(totals[key]) for key in LEDGER_COLUMNS}

    def summary(self, prefix: str = "") -> dict:
        """The star summaries (and notes) as a plain dict, keys prefixed by ``prefix``."""
        return {f"{prefix}{key}": value for key, value in self.items()}

    def by_edge(self) -> pd.DataFrame:
        """Totals per directed edge and message kind.

        Columns ``kind, sender, receiver, messages, floats, ints, bytes``; :data:`SERVER` is
        the server.
        """
        edges = self._merged()
        table = pd.DataFrame({
            "kind": pd.Categorical.from_codes(edges["kind"], categories=self._kinds)
            if self._kinds else pd.Categorical([]),
            "sender": edges["sender"], "receiver": edges["receiver"],
            "messages": edges["messages"], "floats": edges["floats"], "ints": edges["ints"],
        })
        table["kind"] = table["kind"].astype(str)
        table["bytes"] = table["floats"] * self.float_bytes + table["ints"] * self.int_bytes
        return table

    def by_kind(self) -> pd.DataFrame:
        """Totals per message kind and direction (``up``: sent by a device; ``down``: by the
        server). Columns ``kind, direction, messages, floats, ints, bytes``."""
        table = self.by_edge()
        table["direction"] = np.where(table["sender"] == SERVER, "down", "up")
        return (table.groupby(["kind", "direction"], sort=False)[
            ["messages", "floats", "ints", "bytes"]].sum().reset_index())

    # ------------------------------------------------------------------ storage
    def _compact(self) -> None:
        self._edges = self._merged()
        self._pending, self._pending_rows = [], 0

    def _merged(self) -> dict:
        """Every record so far, one row per (kind, sender, receiver)."""
        if not self._pending:
            return self._edges
        parts = [self._edges] + [dict(zip(("kind", "sender", "receiver", "floats", "ints",
                                           "messages"), chunk, strict=True))
                                 for chunk in self._pending]
        cat = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
        unique, inverse = _unique_rows(cat["kind"], cat["sender"], cat["receiver"])
        merged = {"kind": unique[:, 0], "sender": unique[:, 1], "receiver": unique[:, 2]}
        for key in ("floats", "ints", "messages"):
            merged[key] = np.bincount(inverse, weights=cat[key],
                                      minlength=len(unique)).astype(np.int64)
        self._edges, self._pending, self._pending_rows = merged, [], 0
        return merged


def _unique_rows(kind: np.ndarray, sender: np.ndarray, receiver: np.ndarray):
    """Distinct ``(kind, sender, receiver)`` rows, sorted, and each record's row: one integer
    key per record when the ids allow it (a sort of integers; ``np.unique(axis=0)`` sorts
    structured rows, 20x slower with 10^5 devices)."""
    if not len(kind):
        return np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
    low = min(int(sender.min()), int(receiver.min()))
    span = max(int(sender.max()), int(receiver.max())) - low + 1
    if (int(kind.max()) + 1) * span * span < 2**62:
        key = (kind * span + (sender - low)) * span + (receiver - low)
        unique_key, inverse = np.unique(key, return_inverse=True)
        rows = np.stack([unique_key // (span * span), (unique_key // span) % span + low,
                         unique_key % span + low], axis=1)
        return rows, inverse.ravel()
    rows, inverse = np.unique(np.stack([kind, sender, receiver], axis=1), axis=0,
                              return_inverse=True)
    return rows, inverse.ravel()


def _empty_edges() -> dict:
    empty = np.zeros(0, dtype=np.int64)
    return {key: empty for key in ("kind", "sender", "receiver", "floats", "ints", "messages")}

"""The round loop of federated training: FedAvg, one model per group, IFCA.

One :class:`FederatedTrainer` runs every method of k-FED's applications (Sec. 4.2.2): FedAvg
(one model), one model per k-FED group (each device trains the model of each of its
segments' groups) and IFCA (every device takes the model with the lowest loss on its rows),
with the rounds, devices and communication booked in the shared ledger. How each method
trains and aggregates, IFCA's restarts and what the ledger counts: ``docs/algorithms.md``
(Federated training).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .._torch import deterministic_algorithms, resolve_device
from .._validation import check_int
from ..communication import SERVER, Communication
from ..metrics import clustering_accuracy
from ..progress import progress_bar
from ..seeds import seed_for
from .data import DeviceStore
from .selection import PowerOfChoice
from .stacked import StackedModel, average_by_group

__all__ = ["FederatedTrainer", "TrainingResult"]


@dataclass
class TrainingResult:
    """The models after the last round (a stack), the evaluation history (one dict per
    evaluated round), the ledger of the whole run, IFCA's identity accuracy of every round
    (on that round's devices) and, with restarts, every start's IFCA objective and the start
    kept."""

    models: dict
    history: list[dict]
    communication: Communication
    identity_accuracy: list[float] = field(default_factory=list)
    restart_scores: list[float] = field(default_factory=list)
    restart_kept: int = 0


class FederatedTrainer:
    """FedAvg / per-group FedAvg / IFCA rounds on a :class:`~fedclust.fl.data.DeviceStore`.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture (its parameters are not used; copies are initialised per run).
    lr : float
        Local SGD learning rate.
    local_steps : int
        SGD steps per selected device per round (k-FED App. B.1: "10 local updates").
    batch_size : int
        Rows per local step, drawn with replacement from the segment.
    aggregation : {"size", "uniform"}
        Weights of the server's average: rows per segment, or equal (pow-d's update, Cho et
        al. 2020, averages the selected devices equally because it samples them by size).
    loss_rows : int
        Rows (with replacement) on which a device estimates its loss: IFCA's model choice and
        pow-d's loss queries.
    float_bytes : int
        Bytes per float on the wire (float32 models: 4).
    progress : bool
        One progress bar per run.
    device : {"cpu", "cuda", "auto"} or torch.device
        Where the models train (:func:`fedclust._torch.resolve_device`); the random draws
        stay on the CPU, so a seed gives the same devices and rows everywhere.

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.fl.data import DeviceStore
    >>> from fedclust.fl.models import MLP
    >>> from fedclust.fl.selection import RandomBySize
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4)).astype(np.float32)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> store = DeviceStore.from_arrays(X, y, np.arange(200) % 10)
    >>> trainer = FederatedTrainer(MLP(4, 8, 2), lr=0.5, local_steps=5, batch_size=8,
    ...                            progress=False)
    >>> result = trainer.run(store, rounds=20, selection=RandomBySize(5), seed=0)
    >>> result.communication["rounds"], result.communication["floats_up"] == 20 * 5 * 58
    (20, True)
    """

    def __init__(self, model, *, lr: float, local_steps: int, batch_size: int,
                 aggregation: str = "size", loss_rows: int = 100, float_bytes: int = 4,
                 progress: bool = True, device="cpu"):
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise ValueError(f"lr must be a positive number; got {lr!r}")
        if aggregation not in ("size", "uniform"):
            raise ValueError(f"aggregation must be 'size' or 'uniform'; got {aggregation!r}")
        self.model = model
        self.lr = float(lr)
        self.local_steps = check_int(local_steps, "local_steps", low=1)
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.aggregation = aggregation
        self.loss_rows = check_int(loss_rows, "loss_rows", low=1)
        self.float_bytes = check_int(float_bytes, "float_bytes", low=1)
        self.progress = progress
        self.device = resolve_device(device)
        self.stacked = StackedModel(model)

    # ------------------------------------------------------------------ helpers
    def choose_models(self, models, store: DeviceStore, segments, generator) -> np.ndarray:
        """IFCA's choice: the model with the lowest estimated loss on each segment."""
        return self.loss_matrix(models, store, segments, generator).argmin(0).cpu().numpy()

    def loss_matrix(self, models, store: DeviceStore, segments, generator) -> torch.Tensor:
        """Loss of every model on ``loss_rows`` rows of each segment, ``(n_models, n)``."""
        segments = torch.as_tensor(np.asarray(segments), dtype=torch.long)
        return self.stacked.loss_matrix(models, store, segments, rows=self.loss_rows,
                                        generator=generator)

    def _segment_layout(self, store, segment_device):
        """Device of every segment (validated) and rows of every device."""
        if segment_device is None:
            segment_device = np.arange(store.n_segments)
        segment_device = np.asarray(segment_device, dtype=np.int64)
        if segment_device.shape != (store.n_segments,):
            raise ValueError(f"segment_device needs one device per segment "
                             f"({store.n_segments}); got shape {segment_device.shape}")
        n_devices = int(segment_device.max()) + 1
        sizes = np.bincount(segment_device, weights=store.sizes.numpy(), minlength=n_devices)
        return segment_device, sizes

    # ------------------------------------------------------------------ the loop
    def run(self, train: DeviceStore, *, rounds: int, selection, seed: int, n_models: int = 1,
            segment_device=None, segment_group=None, ifca: bool = False, true_group=None,
            restarts: int = 1, restart_rounds: int = 1, evaluate=None, eval_every: int = 1,
            communication: Communication | None = None,
            desc: str = "federated training") -> TrainingResult:
        """Train for ``rounds`` rounds.

        Parameters
        ----------
        train : DeviceStore
            Training rows by segment.
        rounds : int
        selection : RandomBySize, PowerOfChoice or KFedPowerOfChoice
            Picks the devices of each round (positions ``0 .. n_devices - 1``).
        seed : int
            Seeds the initial models, the selection, the minibatches and the rows of the loss
            queries (IFCA's choices, pow-d's candidates): four separate streams, so a method
            that queries losses draws the same minibatch stream as one that does not.
        n_models : int
            Models trained (1: FedAvg; k: per-group models or IFCA's).
        segment_device : array of shape (n_segments,), optional
            Device of every segment (default: every segment is a device).
        segment_group : array of shape (n_segments,), optional
            Model of every segment (default 0); ignored with ``ifca``.
        ifca : bool
            Devices choose their model every round (needs one segment per device).
        true_group : array of shape (n_devices,), optional
            Real cluster of every device, for IFCA's identity accuracy of each round.
        restarts, restart_rounds : int
            IFCA only: run ``restarts`` random starts side by side (each its own initial
            models and streams; start 0 is the run without restarts) for ``restart_rounds``
            rounds, then keep the start with the lowest IFCA objective -- every device's
            loss under its best model, on ``loss_rows`` of its rows, the mean over devices
            weighted by rows -- and go on with it alone to ``rounds``. The discarded starts'
            messages, and the scoring round (every device gets every start's models and sends
            one loss per start), are in the ledger.
        evaluate : callable, optional
            ``evaluate(models) -> dict`` of metrics, called at round 0, every ``eval_every``
            rounds and at the last round (with restarts, for the kept start only, once it is
            chosen).
        communication : Communication, optional
            Ledger to add to (e.g. one holding k-FED's one-shot round).
        """
        return self.run_many([dict(
            train=train, rounds=rounds, selection=selection, seed=seed, n_models=n_models,
            segment_device=segment_device, segment_group=segment_group, ifca=ifca,
            true_group=true_group, restarts=restarts, restart_rounds=restart_rounds,
            evaluate=evaluate, eval_every=eval_every, communication=communication)],
            desc=desc)[0]

    def run_many(self, jobs, *, desc: str = "federated training") -> list[TrainingResult]:
        """Several :meth:`run` calls trained together, round by round.

        Every round, the models of all the jobs' starts are one stack: the copies the
        selected devices train are taken from it in one call, trained in one batched pass
        per local step (:meth:`~fedclust.fl.stacked.StackedModel.sgd_steps`) and averaged
        back in one call, and every index the round needs reaches the device in one copy.
        On a GPU that replaces thousands of small calls and host-device waits per round by
        a few dozen. Each job keeps its own data, models, random streams, ledger and
        evaluation, so its result is the one :meth:`run` gives it alone, up to the rounding
        of the batched products (bit for bit where the backend rounds each copy's products
        alike whatever the batch, as on a CPU).

        Parameters
        ----------
        jobs : sequence of dict
            Each the keyword arguments of one :meth:`run` call, ``train`` included.
        desc : str
            The progress bar's label (one bar for all the jobs).

        Returns
        -------
        list of TrainingResult
            One per job, in order.
        """
        if not jobs:
            raise ValueError("run_many needs at least one job")
        # on a GPU, index_add_ (the server's average) sums in a fixed order only in this mode
        with deterministic_algorithms():
            return self._lockstep([_Job(self, **dict(spec)) for spec in jobs], desc)

    def _lockstep(self, jobs: list[_Job], desc: str) -> list[TrainingResult]:
        """Run ``jobs`` to their last rounds, all of their starts trained together."""
        total = max(job.rounds for job in jobs)
        bar = progress_bar(desc=desc, total=total, disable=not self.progress, unit="round")
        pool = None
        for t in range(1, total + 1):
            live = [job for job in jobs if t <= job.rounds]
            starts = [(job, state) for job in live for state in job.starts]
            if pool is None or not pool.holds([state for _, state in starts]):
                pool = _ModelPool([state for _, state in starts], self.stacked.names)
            work = [job.loop.prepare(state) for job, state in starts]
            # the round's indices on the device in one copy: the slot of every trained copy
            # in the pool, the weight of its segment, the rows of its minibatches
            rows = [job.train.draw_rows(w.segments, self.batch_size, state.batches,
                                        steps=self.local_steps)
                    for (job, state), w in zip(starts, work, strict=True)]
            slots = [pool.offsets[i] + w.group for i, w in enumerate(work)]
            weights = [job.loop.weights(w.segments) for (job, _), w in zip(starts, work,
                                                                             strict=True)]
            moved = _one_copy([torch.as_tensor(np.concatenate(slots)),
                               torch.as_tensor(np.concatenate(weights)), *rows], self.device)
            slot, weight, rows = moved[0], moved[1].to(torch.float32), moved[2:]
            xs = torch.cat([job.train.X[r] for (job, _), r in zip(starts, rows, strict=True)],
                           dim=1)
            ys = torch.cat([job.train.y[r] for (job, _), r in zip(starts, rows, strict=True)],
                           dim=1)
            trained = self.stacked.sgd_steps(pool.take(slot), xs, ys, lr=self.lr)
            pool.average(trained, slot, weight)
            for (job, _), w in zip(starts, work, strict=True):
                job.loop.book(w)
            for job in live:
                job.end_round(t)
            bar.update(1)
            if len(jobs) == 1 and jobs[0].history:
                bar.set_postfix(**{k: f"{v:.3f}" for k, v in jobs[0].history[-1].items()
                                   if k in ("test_accuracy", "train_loss", "identity_accuracy")})
        bar.close()
        return [job.result() for job in jobs]


def _one_copy(tensors: list[torch.Tensor], device: torch.device) -> list[torch.Tensor]:
    """``tensors`` (int64, on the CPU) on ``device`` through one host-to-device copy (each
    copy waits for the device's queued work, so one a round instead of one a tensor)."""
    if device.type == "cpu":
        return tensors
    flat = torch.cat([t.reshape(-1) for t in tensors]).to(device)
    return [part.view(t.shape) for part, t in
            zip(flat.split([t.numel() for t in tensors]), tensors, strict=True)]


class _ModelPool:
    """The models of every start trained in a round, as one stack: start ``i`` holds slots
    ``offsets[i]:offsets[i + 1]``, and its ``models`` are views of them, handed out again
    after every round.

    A round writes its models into the stack the round before last wrote, and its trained
    copies into the same buffer each round: with IFCA's restarts a stack is 120 MB a
    parameter, and each fresh tensor of that size costs a round of page faults. A view of
    the models kept past the next round must therefore be a copy (:meth:`_Loop.snapshot`)."""

    def __init__(self, states: list, names: list[str]):
        self.states = states
        counts = [next(iter(state.models.values())).shape[0] for state in states]
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.stack = {name: torch.cat([state.models[name] for state in states])
                      for name in names}
        self.spare = {name: torch.empty_like(p) for name, p in self.stack.items()}
        self.copies = {name: p.new_empty(0) for name, p in self.stack.items()}

    def take(self, slot: torch.Tensor) -> dict:
        """A copy of the models in ``slot`` (one per trained copy), in the copies' buffer."""
        # emptied first: torch resizes a non-empty ``out`` of another shape only with a
        # deprecation warning; the storage stays, so a round allocates only when it grows
        return {name: torch.index_select(p, 0, slot, out=self.copies[name].resize_(0))
                for name, p in self.stack.items()}

    def average(self, trained: dict, slot: torch.Tensor, weight: torch.Tensor) -> None:
        """The server's step (:func:`average_by_group`) into the spare stack, handed out."""
        self.stack, self.spare = (average_by_group(trained, slot, weight, self.stack,
                                                   out=self.spare), self.stack)
        self.hand_out()

    def holds(self, states: list) -> bool:
        """Whether the pool holds exactly ``states``, in this order."""
        return len(states) == len(self.states) and all(
            a is b for a, b in zip(states, self.states, strict=True))

    def hand_out(self) -> None:
        for i, state in enumerate(self.states):
            a, b = self.offsets[i], self.offsets[i + 1]
            state.models = {name: p[a:b] for name, p in self.stack.items()}


class _Job:
    """One :meth:`FederatedTrainer.run`: its validated settings, its starts, its history."""

    def __init__(self, trainer: FederatedTrainer, train: DeviceStore, *, rounds: int,
                 selection, seed: int, n_models: int = 1, segment_device=None,
                 segment_group=None, ifca: bool = False, true_group=None, restarts: int = 1,
                 restart_rounds: int = 1, evaluate=None, eval_every: int = 1,
                 communication: Communication | None = None):
        self.rounds = check_int(rounds, "rounds", low=1)
        self.eval_every = check_int(eval_every, "eval_every", low=1)
        n_models = check_int(n_models, "n_models", low=1)
        restarts = check_int(restarts, "restarts", low=1)
        if restarts > 1:
            if not ifca:
                raise ValueError("restarts are IFCA's: pass ifca=True, or restarts=1")
            restart_rounds = check_int(restart_rounds, "restart_rounds", low=1,
                                       high=self.rounds)
        self.restart_rounds = restart_rounds
        segment_device, device_sizes = trainer._segment_layout(train, segment_device)
        one_per_device = len(segment_device) == len(device_sizes)
        if (ifca or isinstance(selection, PowerOfChoice)) and not one_per_device:
            raise ValueError("IFCA and pow-d need one segment per device")
        if isinstance(selection, PowerOfChoice) and n_models != 1:
            raise ValueError("pow-d queries the loss of one global model: n_models must be 1")
        if segment_group is None or ifca:
            segment_group = np.zeros(train.n_segments, dtype=np.int64)
        segment_group = np.asarray(segment_group, dtype=np.int64)
        if segment_group.min() < 0 or segment_group.max() >= n_models:
            raise ValueError(f"segment_group must lie in [0, n_models={n_models})")

        self.train = train.to(trainer.device)
        self.seed, self.evaluate = seed, evaluate
        self.comm = communication if communication is not None else Communication(
            float_bytes=trainer.float_bytes)
        self.loop = _Loop(trainer, self.train, selection, self.comm, n_models=n_models,
                          segment_device=segment_device, device_sizes=device_sizes,
                          segment_group=segment_group, ifca=ifca, true_group=true_group)
        self.starts = [self.loop.start(seed, r) for r in range(restarts)]
        self.history: list[dict] = []
        self.restart_scores: list[float] = []
        for state in self.starts:
            self.loop.snapshot(state, 0, {})
        if len(self.starts) == 1:
            self._flush(self.starts[0])

    def _flush(self, state: _Start) -> None:
        """Evaluate the kept start's snapshots, in round order."""
        for t, models, ledger, extra in state.snapshots:
            self.history.append({"round": t, **(self.evaluate(models) if self.evaluate else {}),
                                 **extra, **ledger})
        state.snapshots.clear()

    def end_round(self, t: int) -> None:
        """Book round ``t``, take its snapshots, and after ``restart_rounds`` keep the best
        start."""
        self.comm.add_rounds(1)
        if t % self.eval_every == 0 or t == self.rounds:
            for state in self.starts:
                self.loop.snapshot(state, t, state.last)
        if len(self.starts) > 1 and t == self.restart_rounds:
            self.restart_scores = self.loop.score(self.starts, self.seed)
            self.starts = [self.starts[int(np.argmin(self.restart_scores))]]
        if len(self.starts) == 1 and self.starts[0].snapshots:
            self._flush(self.starts[0])

    def result(self) -> TrainingResult:
        self.loop.ledger.flush()
        kept = self.starts[0]
        return TrainingResult(kept.models, self.history, self.comm, kept.identity,
                              restart_scores=list(map(float, self.restart_scores)),
                              restart_kept=kept.index)


@dataclass
class _Start:
    """One start of the round loop: its models and its own random streams."""

    index: int
    models: dict
    rng: np.random.Generator
    batches: torch.Generator
    queries: torch.Generator
    identity: list = field(default_factory=list)
    snapshots: list = field(default_factory=list)
    last: dict = field(default_factory=dict)


@dataclass
class _Work:
    """A round of one start: the segments that train, the model each trains (its group) and
    the devices that own them."""

    segments: np.ndarray
    group: np.ndarray
    owners: np.ndarray


class _Loop:
    """The rounds of one :meth:`FederatedTrainer.run`: what every start shares."""

    def __init__(self, trainer: FederatedTrainer, train: DeviceStore, selection, comm, *,
                 n_models, segment_device, device_sizes, segment_group, ifca, true_group):
        self.trainer, self.train, self.selection, self.comm = trainer, train, selection, comm
        self.n_models, self.ifca = n_models, ifca
        self.segment_device, self.device_sizes = segment_device, device_sizes
        self.segment_group = segment_group
        self.segment_of_device = np.argsort(segment_device)   # read only with one per device
        self.true_group = None if true_group is None else np.asarray(true_group)
        self.size = trainer.stacked.n_parameters
        self.seg_sizes = train.sizes.numpy()
        self.ledger = _RoundLedger(comm, len(device_sizes))

    def start(self, seed: int, index: int) -> _Start:
        """Start ``index``: its own initial models and streams (start 0: the run's own)."""
        def named(name):
            return seed_for(seed, name) if index == 0 else seed_for(seed, name, "start", index)
        return _Start(index=index,
                      models=self.trainer.stacked.init(self.n_models, named("init"),
                                                       self.trainer.device),
                      rng=np.random.default_rng(named("selection")),
                      batches=torch.Generator().manual_seed(named("batches")),
                      queries=torch.Generator().manual_seed(named("queries")))

    def snapshot(self, state: _Start, t: int, extra: dict) -> None:
        """The models and ledger after round ``t``, to evaluate once the start is kept."""
        self.ledger.flush()
        ledger = {key: self.comm[key] for key in ("floats_up", "floats_down", "bytes_up",
                                                  "bytes_down")}
        models = {name: p.clone() for name, p in state.models.items()}   # the pool reuses
        state.snapshots.append((t, models, ledger, dict(extra)))

    def prepare(self, state: _Start) -> _Work:
        """The first half of a round of ``state``: select the devices and (IFCA) let them
        choose their models; what the devices train is handed out by the caller."""
        trainer, ledger, train, size = self.trainer, self.ledger, self.train, self.size

        def query_losses(devices):
            """pow-d's loss queries: the global model down, one loss value up."""
            ledger.down("model_for_loss", devices, floats=size)
            ledger.up("local_loss", devices, floats=1)
            return trainer.loss_matrix(state.models, train, self.segment_of_device[devices],
                                       state.queries)[0].cpu().numpy()

        chosen = self.selection.select(state.rng, self.device_sizes, query_losses)
        segs = np.flatnonzero(self._marked(chosen.devices)[self.segment_device])
        owners = self.segment_device[segs]
        if self.ifca:
            group = trainer.choose_models(state.models, train, segs, state.queries)
            ledger.down("models", chosen.devices, floats=self.n_models * size)
            if self.true_group is not None:
                state.identity.append(clustering_accuracy(self.true_group[owners], group))
        else:
            group = self.segment_group[segs]
            fresh = ~self._marked(chosen.queried)[owners]   # queried devices hold the model
            ledger.down("model", owners[fresh], floats=size)
        state.last = {"n_filled": chosen.n_filled, "distinct_groups": len(np.unique(group))}
        if state.identity:
            state.last["round_identity_accuracy"] = state.identity[-1]
        return _Work(segments=segs, group=np.asarray(group, dtype=np.int64), owners=owners)

    def _marked(self, devices) -> np.ndarray:
        """A mask over the devices, True on ``devices``."""
        mask = np.zeros(len(self.device_sizes), dtype=bool)
        mask[np.asarray(devices, dtype=np.int64)] = True
        return mask

    def weights(self, segs: np.ndarray) -> np.ndarray:
        """The server's weight of every trained segment: its rows, or 1 (exact integers)."""
        if self.trainer.aggregation == "size":
            return self.seg_sizes[segs].astype(np.int64)
        return np.ones(len(segs), dtype=np.int64)

    def book(self, work: _Work) -> None:
        """The second half: the devices' trained models sent up."""
        self.ledger.up("model_update", work.owners, floats=self.size,
                       ints=1 if self.ifca else 0)

    def score(self, starts: list[_Start], seed: int) -> list[float]:
        """IFCA's objective of every start on the same rows: each device's loss under its
        best model, the mean over devices weighted by rows (one round: every start's models
        down to every device, one loss per start up)."""
        devices = np.arange(len(self.device_sizes))
        self.ledger.flush()
        self.comm.send("restart_models", SERVER, devices,
                       floats=len(starts) * self.n_models * self.size)
        self.comm.send("restart_losses", devices, SERVER, floats=len(starts))
        self.comm.add_rounds(1)
        segs = self.segment_of_device[devices]
        weight = self.device_sizes / self.device_sizes.sum()
        scores = []
        for state in starts:
            rows = torch.Generator().manual_seed(seed_for(seed, "restart rows"))
            best = self.trainer.loss_matrix(state.models, self.train, segs, rows).min(0).values
            scores.append(float(np.dot(weight, best.cpu().numpy())))
        return scores


class _RoundLedger:
    """The messages of the rounds, counted per (kind, device) and booked into the ledger in
    bulk (:meth:`Communication.send_bundled`) whenever it is read: the same totals, per edge
    and per kind, as one :meth:`Communication.send` per message. Booking every round left
    thousands of small arrays between the rounds' large transient tensors, and the heap grew
    by ~0.8 MB a round (glibc cannot return a heap pinned by small live blocks): 12 GB over a
    15,000-round run."""

    def __init__(self, comm: Communication, n_devices: int):
        self.comm, self.n_devices = comm, n_devices
        self.counts: dict[tuple, np.ndarray] = {}

    def _count(self, key, devices) -> None:
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = np.zeros(self.n_devices, dtype=np.int64)
        np.add.at(counts, np.asarray(devices, dtype=np.int64), 1)

    def down(self, kind: str, devices, *, floats: int, ints: int = 0) -> None:
        """One message of ``floats`` floats and ``ints`` ints from the server to each of
        ``devices`` (a device listed twice gets two)."""
        self._count((kind, True, int(floats), int(ints)), devices)

    def up(self, kind: str, devices, *, floats: int, ints: int = 0) -> None:
        """One message from each of ``devices`` to the server."""
        self._count((kind, False, int(floats), int(ints)), devices)

    def flush(self) -> None:
        """Book every counted message into the ledger."""
        for (kind, down, floats, ints), counts in self.counts.items():
            devices = np.flatnonzero(counts)
            if not devices.size:
                continue
            n = counts[devices]
            sender, receiver = (SERVER, devices) if down else (devices, SERVER)
            self.comm.send_bundled(kind, sender, receiver, messages=n, floats=n * floats,
                                   ints=n * ints)
            counts[:] = 0

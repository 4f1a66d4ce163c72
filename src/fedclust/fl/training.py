"""The round loop of federated training: FedAvg, one model per group, IFCA.

One :class:`FederatedTrainer` runs every method of k-FED's applications (Sec. 4.2.2):

* **FedAvg** (McMahan et al., 2017): one model (``n_models=1``); the selected devices start
  from it, run ``local_steps`` SGD steps on minibatches of their own rows, and the server
  averages the results (weighted by rows, ``aggregation="size"``, or not, ``"uniform"``).
* **One model per group** (k-FED + FedAvg): the training rows are cut into *segments*, each
  with a fixed group (``segment_group``) and the device that holds it
  (``segment_device``); a selected device trains the model of each of its segments' groups
  on that segment and sends each back (k' = 2: two models), and each group's model is the
  average of its segments' results.
* **IFCA** (Ghosh et al., 2020, as k-FED describes it, l.242): ``n_models`` models; each round
  every selected device receives all of them, takes the one with the lowest loss on its
  data (estimated on ``loss_rows`` rows drawn with replacement; Ghosh et al. use all local
  rows), trains it and sends it back with the chosen index; each model is averaged over the
  devices that chose it. The *identity accuracy* of a round is the matching accuracy of
  those choices against ``true_group`` (the device's real cluster), logged every round.

The ledger counts every model sent in floats (the parameters of one copy), every loss query
of pow-d (model down, one float up), IFCA's chosen index as an integer, and one round per
round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .._validation import check_int
from ..communication import SERVER, Communication
from ..metrics import clustering_accuracy
from ..progress import progress_bar
from ..seeds import seed_for
from .data import DeviceStore
from .selection import PowerOfChoice
from .stacked import StackedModel, average_by_group, take

__all__ = ["FederatedTrainer", "TrainingResult"]


@dataclass
class TrainingResult:
    """The models after the last round (a stack), the evaluation history (one dict per
    evaluated round) and the ledger of the whole run."""

    models: dict
    history: list[dict]
    communication: Communication
    identity_accuracy: list[float] = field(default_factory=list)


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
                 progress: bool = True):
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
        self.stacked = StackedModel(model)

    # ------------------------------------------------------------------ helpers
    def choose_models(self, models, store: DeviceStore, segments, generator) -> np.ndarray:
        """IFCA's choice: the model with the lowest estimated loss on each segment."""
        segments = torch.as_tensor(np.asarray(segments), dtype=torch.long)
        losses = self.stacked.loss_matrix(models, store, segments, rows=self.loss_rows,
                                          generator=generator)
        return losses.argmin(0).numpy()

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
            evaluate=None, eval_every: int = 1, communication: Communication | None = None,
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
            Seeds the initial models, the minibatches and the selection (separate streams).
        n_models : int
            Models trained (1: FedAvg; k: per-group models or IFCA's).
        segment_device : array of shape (n_segments,), optional
            Device of every segment (default: every segment is a device).
        segment_group : array of shape (n_segments,), optional
            Model of every segment (default 0); ignored with ``ifca``.
        ifca : bool
            Devices choose their model every round (needs one segment per device).
        true_group : array of shape (n_devices,), optional
            Real cluster of every device, for IFCA's identity accuracy.
        evaluate : callable, optional
            ``evaluate(models) -> dict`` of metrics, called at round 0, every ``eval_every``
            rounds and at the last round.
        communication : Communication, optional
            Ledger to add to (e.g. one holding k-FED's one-shot round).
        """
        rounds = check_int(rounds, "rounds", low=1)
        eval_every = check_int(eval_every, "eval_every", low=1)
        n_models = check_int(n_models, "n_models", low=1)
        segment_device, device_sizes = self._segment_layout(train, segment_device)
        one_per_device = len(segment_device) == len(device_sizes)
        segment_of_device = np.argsort(segment_device)       # read only with one per device
        if (ifca or isinstance(selection, PowerOfChoice)) and not one_per_device:
            raise ValueError("IFCA and pow-d need one segment per device")
        if isinstance(selection, PowerOfChoice) and n_models != 1:
            raise ValueError("pow-d queries the loss of one global model: n_models must be 1")
        if segment_group is None or ifca:
            segment_group = np.zeros(train.n_segments, dtype=np.int64)
        segment_group = np.asarray(segment_group, dtype=np.int64)
        if segment_group.min() < 0 or segment_group.max() >= n_models:
            raise ValueError(f"segment_group must lie in [0, n_models={n_models})")

        comm = communication if communication is not None else Communication(
            float_bytes=self.float_bytes)
        rng = np.random.default_rng(seed_for(seed, "selection"))
        batches = torch.Generator().manual_seed(seed_for(seed, "batches"))
        models = self.stacked.init(n_models, seed_for(seed, "init"))
        size = self.stacked.n_parameters
        seg_sizes = train.sizes.numpy()
        history, identity = [], []

        def query_losses(devices):
            """pow-d's loss queries: the global model down, one loss value up."""
            comm.send("model_for_loss", SERVER, devices, floats=size)
            comm.send("local_loss", devices, SERVER, floats=1)
            segs = torch.as_tensor(segment_of_device[devices], dtype=torch.long)
            return self.stacked.loss_matrix(models, train, segs, rows=self.loss_rows,
                                            generator=batches)[0].numpy()

        def record(t, extra):
            row = {"round": t, **(evaluate(models) if evaluate else {}), **extra,
                   "floats_up": comm["floats_up"], "floats_down": comm["floats_down"],
                   "bytes_up": comm["bytes_up"], "bytes_down": comm["bytes_down"]}
            history.append(row)
            return row

        record(0, {})
        bar = progress_bar(desc=desc, total=rounds, disable=not self.progress, unit="round")
        for t in range(1, rounds + 1):
            chosen = selection.select(rng, device_sizes, query_losses)
            segs = np.flatnonzero(np.isin(segment_device, chosen.devices))
            owners = segment_device[segs]
            if ifca:
                group = self.choose_models(models, train, segs, batches)
                comm.send("models", SERVER, chosen.devices, floats=n_models * size)
                if true_group is not None:
                    identity.append(clustering_accuracy(np.asarray(true_group)[owners], group))
            else:
                group = segment_group[segs]
                fresh = ~np.isin(owners, chosen.queried)     # queried devices hold the model
                comm.send("model", SERVER, owners[fresh], floats=size)
            seg_t = torch.as_tensor(segs, dtype=torch.long)
            group_t = torch.as_tensor(group, dtype=torch.long)
            trained = self.stacked.local_steps(take(models, group_t), train, seg_t,
                                               steps=self.local_steps, lr=self.lr,
                                               batch_size=self.batch_size, generator=batches)
            weight = (torch.as_tensor(seg_sizes[segs], dtype=torch.float32)
                      if self.aggregation == "size" else torch.ones(len(segs)))
            models = average_by_group(trained, group_t, weight, models)
            comm.send("model_update", owners, SERVER, floats=size, ints=1 if ifca else 0)
            comm.add_rounds(1)
            bar.update(1)
            if t % eval_every == 0 or t == rounds:
                extra = {"n_filled": chosen.n_filled,
                         "distinct_groups": len(np.unique(group))}
                if identity:
                    extra["identity_accuracy"] = identity[-1]
                row = record(t, extra)
                bar.set_postfix(**{k: f"{v:.3f}" for k, v in row.items()
                                   if k in ("test_accuracy", "train_loss", "identity_accuracy")})
        bar.close()
        return TrainingResult(models, history, comm, identity)

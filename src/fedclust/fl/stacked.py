"""Many copies of one model, as stacked parameters, trained and evaluated in one call.

A *stack* is a dict ``{name: tensor of shape (n, *shape)}``: copy ``i`` of every parameter
along dim 0. A round of FedAvg gives each participating device a copy of its group's model
(``take``), runs the local steps of all of them at once (one batched forward and backward
pass per step, :meth:`StackedModel.local_steps`), and averages the copies back per group
(:func:`average_by_group`). On a CPU the per-device weight gradients are the floor of the cost,
so a round costs about linearly in the devices it trains; there is no Python loop over devices
or samples.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .._torch import deterministic

__all__ = ["StackedModel", "average_by_group", "take"]

Stack = dict[str, torch.Tensor]

#: Bytes of parameters trained together on a CPU (about the last-level cache a core can use;
#: 6 copies of Table 2's MLP, 1.3-1.6x faster than all 192 of IFCA's restarts at once and
#: than one at a time, measured on 2-core AMD EPYC).
_CACHE_BYTES = 4 << 20


def take(stack: Stack, index) -> Stack:
    """Copies ``index`` (a LongTensor) of every parameter, as a new stack (fresh memory: the
    local steps update it in place; ``index_select`` copies once, where indexing and then
    cloning copied twice)."""
    index = torch.as_tensor(index, dtype=torch.long)
    return {name: p.index_select(0, index.to(p.device)) for name, p in stack.items()}


def average_by_group(trained: Stack, group: torch.Tensor, weight: torch.Tensor,
                     previous: Stack, *, out: Stack | None = None) -> Stack:
    """Weighted mean of the trained copies of each group; a group no copy trained keeps its
    ``previous`` model (FedAvg's server step, McMahan et al. 2017, Alg. 1).

    ``trained`` is consumed: its copies are scaled by their weights in place. With ``out``
    (a stack shaped like ``previous``, not ``previous`` itself) the means are written there."""
    first = next(iter(previous.values()))
    group = group.to(first.device)
    weight = weight.to(first.device, torch.float32)
    total = torch.zeros(first.shape[0], device=first.device).index_add_(0, group, weight)
    untrained = torch.nonzero(total == 0).ravel()
    denominator = total.clamp_min(1e-12)
    means = {}
    for name, p in trained.items():
        shape = (-1,) + (1,) * (p.dim() - 1)
        # in place, where a stack of 192 copies (IFCA's restarts) is 120 MB a parameter:
        # each fresh tensor of that size is a round of page faults
        sums = (torch.zeros_like(previous[name]) if out is None else out[name].zero_())
        sums.index_add_(0, group, p.mul_(weight.view(shape)))
        sums.div_(denominator.view(shape))
        if len(untrained):
            sums.index_copy_(0, untrained, previous[name].index_select(0, untrained))
        means[name] = sums
    return means


class StackedModel:
    """One model architecture, evaluated and trained as a stack of copies.

    Parameters
    ----------
    module : torch.nn.Module
        The architecture, with a ``stacked_forward(params, x)`` method (see
        :mod:`fedclust.fl.models`). Its own parameters are never trained: they give the names,
        shapes and the initialisation; every call takes the parameters to use.
    """

    def __init__(self, module: nn.Module):
        if not callable(getattr(module, "stacked_forward", None)):
            raise TypeError(f"{type(module).__name__} has no stacked_forward(params, x): "
                            f"see fedclust.fl.models")
        self.module = module
        self.names = [name for name, _ in module.named_parameters()]
        self.n_parameters = sum(p.numel() for p in module.parameters())

    def losses(self, stack: Stack, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of copy ``i`` on batch ``x[i], y[i]``: shape ``(n,)``."""
        logits = self.module.stacked_forward(stack, x)
        ce = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")
        return ce.view(y.shape).mean(1)

    def init(self, n_models: int, seed: int, device=None) -> Stack:
        """``n_models`` independently initialised copies (PyTorch's default initialisation),
        reproducible from ``seed``, drawn on the CPU and placed on ``device`` (default: the
        CPU), so a seed gives the same models on every device."""
        with deterministic(seed):
            copies = [dict(_reinitialised(self.module).named_parameters())
                      for _ in range(n_models)]
        return {name: torch.stack([c[name].detach() for c in copies]).to(device)
                for name in self.names}

    def local_steps(self, stack: Stack, store, segments: torch.Tensor, *, steps: int,
                    lr: float, batch_size: int, generator: torch.Generator) -> Stack:
        """``steps`` SGD steps of every copy, copy ``i`` on minibatches of segment
        ``segments[i]`` of ``store`` (``batch_size`` rows drawn with replacement per step;
        the rows of all the steps are drawn in one call, the same rows as one call per step).
        Returns the trained copies (``stack`` is left as it was)."""
        xs, ys = store.sample(segments, batch_size, generator, steps=steps)
        return self.sgd_steps({name: p.clone() for name, p in stack.items()}, xs, ys, lr=lr)

    def sgd_steps(self, params: Stack, xs: torch.Tensor, ys: torch.Tensor, *,
                  lr: float) -> Stack:
        """SGD steps of every copy of ``params`` (trained in place where it can be): step
        ``s`` moves copy ``i`` along the gradient of its mean cross-entropy on ``xs[s, i]``,
        ``ys[s, i]``.

        A model with ``stacked_sgd_step(params, x, y, lr)`` (the MLP: its gradient written
        out, the update fused into the products) takes its steps through it; any other model
        through autograd, where one backward pass of the summed losses gives every copy its
        own gradient."""
        fused = getattr(self.module, "stacked_sgd_step", None)
        if fused is not None:
            first = next(iter(params.values()))
            # on a CPU, all the steps of a few copies at a time: their weights stay in the
            # cache from one step to the next (a copy's steps read only its own slices, and
            # a batched product's slice does not depend on the batch around it)
            chunk = (max(1, _CACHE_BYTES // (self.n_parameters * first.element_size()))
                     if first.device.type == "cpu" else len(first))
            for start in range(0, len(first), chunk):
                part = {name: p[start:start + chunk] for name, p in params.items()}
                for step in range(xs.shape[0]):
                    fused(part, xs[step, start:start + chunk], ys[step, start:start + chunk],
                          lr)
            return params
        params = {name: p.detach().requires_grad_(True) for name, p in params.items()}
        for step in range(xs.shape[0]):
            grads = torch.autograd.grad(self.losses(params, xs[step], ys[step]).sum(),
                                        [params[n] for n in self.names])
            with torch.no_grad():
                torch._foreach_add_([params[n] for n in self.names], list(grads), alpha=-lr)
        return {name: p.detach() for name, p in params.items()}

    @torch.no_grad()
    def loss_matrix(self, stack: Stack, store, segments: torch.Tensor, *, rows: int,
                    generator: torch.Generator) -> torch.Tensor:
        """Mean loss of every model of ``stack`` on the same ``rows`` rows (drawn with
        replacement) of each of ``segments``: shape ``(n_models, len(segments))``. Every
        model reads all the drawn rows as one batch (no copy of the models or the rows)."""
        xb, yb = store.sample(segments, rows, generator)
        n_models, n = next(iter(stack.values())).shape[0], len(segments)
        x = xb.reshape(1, n * rows, *xb.shape[2:]).expand(n_models, *(-1,) * (xb.dim() - 1))
        logits = self.module.stacked_forward(stack, x)
        ce = F.cross_entropy(logits.flatten(0, 1), yb.reshape(-1).repeat(n_models),
                             reduction="none")
        return ce.view(n_models, n, rows).mean(2)

    @torch.no_grad()
    def evaluate(self, stack: Stack, X: torch.Tensor, y: torch.Tensor, model_of_row,
                 *, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        """Loss and correctness of every row under the model ``model_of_row`` picks for it."""
        model_of_row = torch.as_tensor(np.asarray(model_of_row), dtype=torch.long,
                                       device=X.device)
        loss = torch.empty(len(y), device=X.device)
        correct = torch.empty(len(y), dtype=torch.bool, device=X.device)
        for m in torch.unique(model_of_row).tolist():
            params = {name: p[m:m + 1] for name, p in stack.items()}
            rows = torch.nonzero(model_of_row == m).ravel()
            for start in range(0, len(rows), chunk):
                r = rows[start:start + chunk]
                logits = self.module.stacked_forward(params, X[r][None])[0]
                loss[r] = F.cross_entropy(logits, y[r], reduction="none")
                correct[r] = logits.argmax(1) == y[r]
        return loss.cpu().numpy().astype(np.float64), correct.cpu().numpy()


def _reinitialised(module: nn.Module) -> nn.Module:
    """A copy of ``module`` with freshly initialised parameters (each layer's own
    ``reset_parameters``, i.e. PyTorch's default initialisation)."""
    fresh = copy.deepcopy(module)
    for layer in fresh.modules():
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
    return fresh

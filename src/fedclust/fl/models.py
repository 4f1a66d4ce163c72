"""The models of k-FED's applications (Dennis et al., 2021, App. B.1): Table 2's
:class:`MLP` and Fig 4's :class:`CharLSTM`, each with a ``stacked_forward(params, x)`` that runs
``D`` copies at once, so that all the devices of a round train in one batched call
(:mod:`fedclust.fl.stacked`), and :func:`build_model` to build them by name.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.func import functional_call

__all__ = ["MLP", "CharLSTM", "build_model", "n_parameters", "MODELS"]


class MLP(nn.Module):
    """``d_in -> hidden -> n_classes`` with one ReLU (Ghosh et al.'s ``SimpleLinear``).

    Table 2's model (reconstructed). App. B.1 says "a CNN-based model with one hidden layer and
    200 hidden units ... following Ghosh et al. (2020)"; Ghosh et al.'s rotated-MNIST model
    (their public code's ``SimpleLinear(h1=200)``) is a 784-200-10 ReLU network with no
    convolution, so we read "CNN-based" as a slip and build that network."""

    def __init__(self, d_in: int = 784, hidden: int = 200, n_classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))

    @staticmethod
    def stacked_forward(params: dict, x: torch.Tensor) -> torch.Tensor:
        """The forward pass of ``D`` copies at once: ``params`` holds every parameter with a
        leading dimension ``D`` and ``x`` one batch per copy (``(D, B, ...)``), in batched
        matrix products. The gradient of the sum of the copies' losses is then every copy's
        own gradient, so one backward pass trains all the devices of a round
        (:mod:`fedclust.fl.stacked`)."""
        hidden = torch.relu(torch.baddbmm(params["fc1.bias"][:, None], x,
                                          params["fc1.weight"].transpose(1, 2)))
        return torch.baddbmm(params["fc2.bias"][:, None], hidden,
                             params["fc2.weight"].transpose(1, 2))

    @staticmethod
    @torch.no_grad()
    def stacked_sgd_step(params: dict, x: torch.Tensor, y: torch.Tensor, lr: float) -> None:
        """One SGD step of every copy on its own batch, in place: copy ``i`` moves by ``-lr``
        times the gradient of its mean cross-entropy on ``x[i], y[i]``, the gradient written
        out by hand (backpropagation through the two layers) and each weight update fused into
        its gradient's batched product (``baddbmm_``). The same step as autograd on
        :meth:`stacked_forward` (up to float rounding), without its graph: on a CPU, with
        10-20 rows per copy, the graph's bookkeeping costs as much as the products."""
        w1, b1, w2, b2 = (params[n] for n in ("fc1.weight", "fc1.bias", "fc2.weight",
                                              "fc2.bias"))
        pre = torch.baddbmm(b1[:, None], x, w1.transpose(1, 2))             # (D, B, H)
        hidden = torch.relu(pre)
        logits = torch.baddbmm(b2[:, None], hidden, w2.transpose(1, 2))     # (D, B, C)
        # d(mean cross-entropy)/d(logits) = (softmax - one-hot) / B
        # (the one-hot as a comparison, not scatter_add_: CUDA's scatter_add_ has no
        # deterministic kernel for these shapes, and p - 1 is p + (-1) bit for bit)
        grad = torch.softmax(logits, dim=-1)
        classes = torch.arange(grad.shape[-1], device=grad.device)
        grad.sub_((y[..., None] == classes).to(grad.dtype))
        grad.div_(x.shape[1])
        back = torch.bmm(grad, w2).mul_(pre > 0)                           # (D, B, H)
        w2.baddbmm_(grad.transpose(1, 2), hidden, alpha=-lr)
        b2.sub_(grad.sum(1), alpha=lr)
        w1.baddbmm_(back.transpose(1, 2), x, alpha=-lr)
        b1.sub_(back.sum(1), alpha=lr)


class CharLSTM(nn.Module):
    """Next-character model: embedding, LSTM, a linear layer on the last step's state.

    Fig 4's Shakespeare model. LEAF's is an 8-d embedding and two LSTM layers of 256 units; on a
    CPU we default to one layer (the size is a config knob; not in the paper, which only points
    to LEAF)."""

    def __init__(self, vocab: int = 80, embed: int = 8, hidden: int = 128, layers: int = 1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embedding(x))
        return self.out(h[:, -1])

    def stacked_forward(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        """Copy ``i`` (``params[name][i]``) on batch ``x[i]``: one call of PyTorch's own
        LSTM kernel per copy. A stack batched over copies would step through time in Python
        with one small product per step; the compiled per-copy kernel is 7-21x faster on one
        thread (``benchmarks/results/fl_round.md``), and autograd still gives every copy its
        own gradient from one backward pass of the summed losses. (``torch.func.vmap`` over
        ``nn.LSTM`` falls back to a slow loop on a CPU and has no batching rule at all without
        autograd.)"""
        return torch.stack([
            functional_call(self, {name: p[i] for name, p in params.items()}, (x[i],))
            for i in range(x.shape[0])])


#: Model names the config may use, and their classes.
MODELS = {"mlp": MLP, "lstm": CharLSTM}


def build_model(name: str, **options) -> nn.Module:
    """A fresh model ``name`` (a key of :data:`MODELS`) built with ``options``."""
    if name not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}; got {name!r}")
    return MODELS[name](**options)


def n_parameters(model: nn.Module) -> int:
    """Floats in one copy of the model: what one model sent over the network costs."""
    return sum(p.numel() for p in model.parameters())

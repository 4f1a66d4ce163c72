"""Federated training on top of the federation and the ledger: FedAvg, IFCA and client
selection (random, pow-d, k-FED + pow-d), for k-FED's applications (Dennis et al., 2021,
Sec. 4.2.2 and App. B.1).

PyTorch is the optional extra ``embed``; nothing outside :mod:`fedclust.fl` and
:mod:`fedclust.embed` imports it, so the clustering library and the pipeline registry load
without it.

* :mod:`fedclust.fl.models`: the models (IFCA's 784-200-10 MLP, a character LSTM).
* :mod:`fedclust.fl.stacked`: many copies of one model as stacked parameters, trained by one
  batched call per local step (no Python loop over devices or samples; the MLP's step is
  written out and fused, the other models' go through autograd).
* :mod:`fedclust.fl.data`: per-device row stores, train/test splits, FedProx's power-law
  class partition.
* :mod:`fedclust.fl.selection`: which devices train in a round.
* :mod:`fedclust.fl.training`: the round loop (FedAvg, one model per group, IFCA with
  random restarts scored by its own objective).
"""

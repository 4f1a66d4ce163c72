"""Federated training on top of the federation and the ledger -- FedAvg, IFCA and client
selection (random, pow-d, k-FED + pow-d) -- for k-FED's applications (Dennis et al., 2021,
Sec. 4.2.2 and App. B.1): the models (:mod:`fedclust.fl.models`), many copies of one model
trained by one batched call per local step (:mod:`fedclust.fl.stacked`), per-device rows and
splits (:mod:`fedclust.fl.data`), k-FED's clusters as training groups (:mod:`fedclust.fl.clusters`),
client selection (:mod:`fedclust.fl.selection`) and the round loop (:mod:`fedclust.fl.training`).
PyTorch is the optional extra ``embed``: see docs/library.md.
"""

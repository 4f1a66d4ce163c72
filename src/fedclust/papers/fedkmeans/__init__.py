"""What only federated k-means (Triebe & Rajagopal, 2019) uses: its declarations, experiments,
figures, claims, captions and rules, and the names they share (below)."""

__all__ = ["VARIED_TITLES", "SYMBOLS", "CENTRAL"]

#: Federated k-means: how captions and axes name the hyper-parameters (the paper's symbols).
VARIED_TITLES = {"sample_fraction": "client fraction C", "local_epochs": "local epochs E",
                 "client_lr": "client learning rate beta"}
#: Federated k-means: the paper's symbols of the hyper-parameters.
SYMBOLS = {"sample_fraction": "C", "local_epochs": "E", "client_lr": "beta"}
#: Federated k-means: how tables name central k-means in a sweep of ``sample_fraction`` (the
#: paper's "central").
CENTRAL = "central"

"""Federated k-means (Triebe & Rajagopal, 2019): what the pipeline produces.

Rules that compute the tables live in ``workflow/rules/fedkmeans.smk``; the figures, gathered
tables, claims and captions are declared here (see :mod:`fedclust.pipeline.registry`).

Tables: ``results/fedkmeans/sweeps/<sweep>.csv`` (one hyper-parameter sweep, every value and
seed; gathered in ``sweeps.csv``) and ``results/fedkmeans/progress/<run>.csv`` (one run's
centroids round by round; gathered in ``progress.csv``) and
``results/fedkmeans/real/<data set>.csv`` (beyond the paper: natural clients of real data,
beside k-FED and LocalKMeans; gathered in ``real.csv``).
"""

from __future__ import annotations

from .declarations import Figure, Paper, Table, stated_differences
from .kfed import chosen_oracle_inputs

__all__ = ["PAPER", "CITATION", "shared_settings", "sweep_part", "progress_part", "real_part",
           "real_inputs", "VARIED_TITLES", "SYMBOLS", "CENTRAL"]

CITATION = "Federated k-means (Triebe & Rajagopal, 2019)"
#: How captions and axes name the hyper-parameters (the paper's symbols).
VARIED_TITLES = {"sample_fraction": "client fraction C", "local_epochs": "local epochs E",
                 "client_lr": "client learning rate beta"}
#: The paper's symbols of the hyper-parameters, in captions and figure titles.
SYMBOLS = {"sample_fraction": "C", "local_epochs": "E", "client_lr": "beta"}
#: How tables name central k-means in a sweep of ``sample_fraction`` (the paper's "central").
CENTRAL = "central"
#: What a sweep's or a progress run's name may be (it is part of file names).
_NAME = r"[A-Za-z0-9]+"


def _section(config) -> dict:
    return config["fedkmeans"]


def shared_settings(config, *, real: bool = False) -> dict:
    """The section's settings a job needs: every shared knob, not the other jobs' lists (so
    that adding a sweep, a progress run or a real data set reruns no other job); ``real``
    adds the real-data subsection."""
    skip = {"enabled", "sweeps", "progress", "real"} - ({"real"} if real else set())
    return {key: value for key, value in _section(config).items() if key not in skip}


def sweep_part(sweep: str) -> str:
    return f"results/fedkmeans/sweeps/{sweep}.csv"


def progress_part(name: str) -> str:
    return f"results/fedkmeans/progress/{name}.csv"


def real_part(dataset: str) -> str:
    return f"results/fedkmeans/real/{dataset}.csv"


def real_inputs(dataset: str, config) -> dict:
    """The real-data job's inputs besides the features: the k-FED separation analysis's
    oracle clusterings and chosen k (``kfed.separation``)."""
    return chosen_oracle_inputs(dataset, config, key="fedkmeans.real.datasets")


def _real(config) -> list[str]:
    return list(_section(config)["real"]["datasets"])


def _sweeps(config) -> list[str]:
    return list(_section(config)["sweeps"])


def _progress(config) -> list[str]:
    return list(_section(config)["progress"])


def _alpha(cfg) -> str:
    mu = cfg["server_momentum"]
    return f"alpha = ({cfg['server_lr']:g}, {mu:g})" if mu else f"alpha = {cfg['server_lr']:g}"


def _batch(cfg) -> str:
    return "B = infinity (full batch)" if cfg["batch_size"] is None else f"B = {cfg['batch_size']}"


def _start(cfg) -> str:
    if cfg["init"] == "uniform":
        low, high = cfg["init_bounds"]
        return (f"start uniform in [{low:g}, {high:g}] (the authors' code; the paper says "
                f"'randomly')")
    return f"start {cfg['init']} (not the paper's random start)"


def _basis(cfg) -> str:
    return ("all training rows" if cfg["reassign_basis"] == "all"
            else "the round's rows (the authors' code)")


def _common(config) -> str:
    cfg = _section(config)
    data = cfg["data"]
    means = ", ".join(f"{m:g}" for m in data["means"])
    assignment = (f"client i gets Gaussian i mod {len(data['means'])}, as in the authors' code"
                  if data["assignment"] == "balanced" else "the Gaussian drawn per client")
    return (
        f" Data (Sec. 2.1): {data['n_clients']} training and {data['n_test_clients']} test "
        f"clients of {data['samples_per_client']} rows, each client's rows from one 1-D "
        f"Gaussian of mean {means} and scale {data['scale']:g} "
        f"({assignment}). "
        f"K = {cfg['n_clusters']}; {_start(cfg)}; a cluster smaller than "
        f"{cfg['reassign_fraction']:g} of {_basis(cfg)} for {cfg['reassign_after']} "
        f"consecutive rounds is re-initialized (Sec. 2.3). "
        f"alpha = (rate, momentum) read from the authors' code: momentum as an exponential "
        f"moving average of the server's steps ({cfg['server_momentum_style']}); a cluster no "
        f"sampled client saw keeps its centroid. Central k-means: Lloyd's iterations from the "
        f"same kind of start with the same reassignment rule. Metrics (Sec. 2.2): the mean "
        f"Euclidean distance of every row to its nearest centroid, and the Davies-Bouldin index "
        f"computed from the model's centroids (as the authors' code; scikit-learn's "
        f"davies_bouldin_score uses the clusters' means), left out of a run whose rows meet "
        f"fewer than two centroids; mean +- one standard deviation over {cfg['seeds']} seeds "
        f"(10 in the paper), the same clients for every setting of a seed.")


def _sweep_caption(config, sweep) -> str:
    cfg = _section(config)
    spec = cfg["sweeps"][sweep]
    vary = spec["vary"]
    fixed = ", ".join(f"{SYMBOLS[k]} = {spec[k]:g}" for k in SYMBOLS if k != vary)
    values = spec.get("values") or cfg["sample_fractions"]
    central = " and central k-means" if vary == "sample_fraction" else ""
    return (f"Triebe & Rajagopal (2019) {sweep} reproduced: mean distance (left) and "
            f"Davies-Bouldin index (right) on the training and the test clients against the "
            f"{VARIED_TITLES[vary]} ({', '.join(f'{v:g}' for v in values)}{central}). "
            f"Hyper-parameters: {_batch(cfg)}, {fixed}, T = {cfg['n_rounds']}, {_alpha(cfg)}."
            + _common(config) + stated_differences(config, "fedkmeans", "sweeps"))


def _progress_caption(config, name) -> str:
    cfg = _section(config)
    spec = cfg["progress"][name]
    if spec.get("central"):
        what = f"central k-means over T = {spec['n_rounds']} iterations (Fig 6)"
    else:
        what = (f"federated k-means with C = {spec['sample_fraction']:g}, E = "
                f"{spec['local_epochs']}, beta = {spec['client_lr']:g}, {_batch(cfg)}, "
                f"T = {spec['n_rounds']}, {_alpha(cfg)} (Fig 7; C is not in the caption: "
                f"reconstructed from the authors' result file names)")
    return (f"Triebe & Rajagopal (2019) {name} reproduced: every centroid after every round "
            f"of one run of {what}, with +- the standard deviation of the training rows "
            f"nearest to it; dashed lines: the Gaussians' means." + _common(config))


def _real_caption(config, dataset) -> str:
    cfg = _section(config)
    real = cfg["real"]
    cs = ", ".join(f"{c:g}" for c in real["sample_fractions"])
    return (f"Beyond Triebe & Rajagopal (2019): federated k-means on {dataset}'s natural clients "
            f"(not in the paper), its k-means cost on all the rows over the cost of k-means on "
            f"the pooled data (the k-FED oracle; k chosen by the k-FED separation analysis) "
            f"against the floats sent, beside k-FED (k' = {real['kfed_device_clusters']}, one "
            f"shot) and LocalKMeans (L = {real['localkmeans_local_steps']}, "
            f"{real['localkmeans_iterations']} iterations, LocalKMeans++). Federated k-means: "
            f"C = {cs}, E = {real['local_epochs']}, beta = {real['client_lr']:g}, "
            f"{_batch(real)}, "
            f"T = {real['n_rounds']}, {_alpha(cfg)}, start {real['init']} (a uniform start in "
            f"the data's box leaves most centroids without rows in these dimensions). "
            f"{real['runs']} runs each, mean +- std.")


PAPER = Paper(
    key="fedkmeans",
    title=CITATION,
    figures=(
        Figure("sweep_{dataset}", lambda config, sweep: [sweep_part(sweep)],
               "fedclust.plots.fedkmeans:plot_sweep", _sweep_caption, datasets=_sweeps,
               instance_pattern=_NAME),
        Figure("progress_{dataset}", lambda config, name: [progress_part(name)],
               "fedclust.plots.fedkmeans:plot_progress", _progress_caption,
               datasets=_progress, instance_pattern=_NAME),
        Figure("real_{dataset}", lambda config, ds: [real_part(ds)],
               "fedclust.plots.fedkmeans:plot_real", _real_caption, datasets=_real),
    ),
    tables=(Table("sweeps", lambda config: [sweep_part(s) for s in _sweeps(config)]),
            Table("progress", lambda config: [progress_part(p) for p in _progress(config)]),
            Table("real", lambda config: [real_part(ds) for ds in _real(config)])),
    claims="fedclust.claims.fedkmeans:claims",
    claim_inputs=lambda config: {
        **({"sweeps": "results/fedkmeans/sweeps.csv"} if _sweeps(config) else {}),
        **({"progress": "results/fedkmeans/progress.csv"} if _progress(config) else {}),
        **({"real": "results/fedkmeans/real.csv"} if _real(config) else {})},
)

"""The cross-paper comparison (not in any paper): what the pipeline produces.

Rules that compute the tables live in ``workflow/rules/comparison.smk``; the figures, gathered
tables, claims and captions are declared here (see :mod:`fedclust.pipeline.registry`).

Tables: ``results/comparison/settings/<data set>_<partition>.csv`` (every algorithm on one
partition of one data set, every dropout fraction and run; gathered in ``table.csv``) and
``results/comparison/heterogeneity/<data set>.csv`` (the sweep from the natural partition to
IID; gathered in ``heterogeneity.csv``).
"""

from __future__ import annotations

from .data import DATASETS, MIXTURE, title_of
from .declarations import Figure, Paper, Table, gathered_table

__all__ = ["PAPER", "CITATION", "setting_part", "heterogeneity_part", "settings",
           "natural_datasets", "features", "job_settings", "DATASET_PATTERN"]

CITATION = "Cross-paper comparison (this pipeline; not in any paper)"
#: What the ``{dataset}`` of the comparison's file names may be.
DATASET_PATTERN = "|".join([MIXTURE, *DATASETS])


def _section(config) -> dict:
    return config["comparison"]


def setting_part(dataset: str, partition: str) -> str:
    return f"results/comparison/settings/{dataset}_{partition}.csv"


def heterogeneity_part(dataset: str) -> str:
    return f"results/comparison/heterogeneity/{dataset}.csv"


def _has_natural(dataset: str) -> bool:
    return dataset in DATASETS and DATASETS[dataset].natural_devices is not None


def settings(config) -> list[tuple[str, str]]:
    """Every (data set, partition) the config asks for; ``natural`` only where the data set
    has natural devices."""
    cfg = _section(config)
    return [(ds, part) for ds in cfg["datasets"] for part in cfg["partitions"]
            if part != "natural" or _has_natural(ds)]


def natural_datasets(config) -> list[str]:
    """The data sets of the heterogeneity sweep: those with natural devices."""
    return [ds for ds in _section(config)["datasets"] if _has_natural(ds)]


def features(dataset: str) -> list[str]:
    """The prepared features a job reads (none for the mixture, drawn in the job)."""
    return [] if dataset == MIXTURE else [f"data/{dataset}/features.h5"]


def job_settings(config, dataset: str, *, heterogeneity: bool = False) -> dict:
    """What one job needs: the section with ``n_clusters`` this data set's ``k`` and without
    the other jobs' lists, so that adding a data set or partition reruns no other job."""
    cfg = _section(config)
    skip = {"enabled", "datasets", "partitions"} | (set() if heterogeneity else
                                                    {"mix_fractions"})
    out = {key: value for key, value in cfg.items() if key not in skip}
    out["n_clusters"] = cfg["n_clusters"][dataset]
    if dataset != MIXTURE:
        out.pop("mixture", None)
    return out


_REASSIGN_BASIS = {"all": "every client's rows (Sec. 2.3 as printed)",
                   "round": "the round's rows (the authors' code; not Sec. 2.3's basis)"}


def _reassignment(fkm) -> str:
    if fkm["reassign_after"] is None:
        return "no cluster re-initialized"
    return (f"a cluster re-initialized after {fkm['reassign_after']} rounds below "
            f"a fraction {fkm['reassign_fraction']:g} of {_REASSIGN_BASIS[fkm['reassign_basis']]}")


def _variants(cfg) -> str:
    lkm = ", ".join(f"L = {s}" for s in cfg["localkmeans"]["local_steps"])
    core, fkm = cfg["coreset"], cfg["fedkmeans"]
    topologies = " and ".join("a star" if t == "star" else
                              f"an Erdős–Rényi graph G(n, {core['erdos_renyi_p']:g})"
                              for t in core["topologies"])
    return (f"k-FED (k' = {cfg['device_clusters']}, one round, Algorithm 2 with "
            f"{cfg['kfed']['server_lloyd_rounds']} server Lloyd round(s)); distributed Lloyd "
            f"(k-means++ seeding, at most {cfg['distributed_lloyd']['max_iter']} rounds); "
            f"LocalKMeans ({lkm}, T = {cfg['localkmeans']['n_iter']}); the distributed "
            f"coreset (t = {core['coreset_size']}, over {topologies}); federated k-means "
            f"(C = {fkm['sample_fraction']:g}, E = {fkm['local_epochs']}, beta = "
            f"{fkm['client_lr']:g}, T = {fkm['n_rounds']}, k-means++ start, "
            f"{_reassignment(fkm)}); and scikit-learn's "
            f"KMeans on the pooled data ({cfg['centralized_n_init']} restarts), the reference")


def _data(config) -> str:
    cfg = _section(config)
    ks = ", ".join(f"{title_of(ds) if ds != MIXTURE else 'the mixture'} k = "
                   f"{cfg['n_clusters'][ds]}" for ds in cfg["datasets"])
    rows = f"at most {cfg['max_samples']} rows each (a seeded subset)" if cfg["max_samples"] \
        else "every row"
    mix = cfg["mixture"]
    return (f"Data: {ks}; {rows}; the mixture is k-FED's separated Gaussian model (d = "
            f"{mix['n_features']}, c = {mix['separation']:g}, {mix['samples_per_cluster']} "
            f"points per component). ")


def _conventions(config) -> str:
    cfg = _section(config)
    return (f"Partitions: IID (rows dealt at random over {cfg['n_devices']} devices), "
            f"structured (each of the same {cfg['n_devices']} devices holds rows of at most "
            f"k' = {cfg['device_clusters']} clusters of the centralized clustering, k-FED's "
            f"Sec. 4.2.1), natural (FEMNIST writers, Shakespeare roles). Quality on all the "
            f"rows: the k-means cost of the returned centres over the centralized cost. "
            f"Communication from each algorithm's ledger: a coreset over a graph floods every "
            f"portion over every edge (Balcan et al.'s Algorithm 3), the centralized reference "
            f"uploads every row once. Mean over {cfg['runs']} run(s), bars from the best run "
            f"to the worst; every algorithm sees the "
            f"same partition and the same dropped devices in a run. Not in any paper.")


def _pareto_caption(config, dataset=None, *, x: str) -> str:
    what = "bytes sent (up and down)" if x == "bytes" else "communication rounds"
    return (f"All algorithms side by side: k-means cost over the centralized cost against the "
            f"{what}, no dropout; rows: data sets, columns: partitions; the grey steps join "
            f"the Pareto-optimal points. Algorithms: {_variants(_section(config))}. "
            + _data(config) + _conventions(config))


def _dropout_caption(config, dataset=None) -> str:
    cfg = _section(config)
    fractions = ", ".join(f"{f:g}" for f in cfg["dropout"])
    return (f"Robustness to devices dropping out: the cost over the centralized cost (of all "
            f"the data) when a fraction {fractions} of the devices, the same for every "
            f"algorithm, sends nothing; the dropped devices' rows are still scored. "
            f"Algorithms: {_variants(cfg)}. " + _data(config) + _conventions(config))


def _heterogeneity_caption(config, dataset=None) -> str:
    cfg = _section(config)
    fractions = ", ".join(f"{f:g}" for f in cfg["mix_fractions"])
    return (f"Robustness to heterogeneity: from the natural partition (0) to IID (1), a "
            f"fraction {fractions} of the rows moved to random devices; cost over the "
            f"centralized cost. Algorithms: {_variants(cfg)}. " + _data(config)
            + _conventions(config))


def _claim_inputs(config) -> dict:
    out = {"table": "results/comparison/table.csv"}
    if natural_datasets(config):
        out["heterogeneity"] = "results/comparison/heterogeneity.csv"
    return out


PAPER = Paper(
    key="comparison",
    title=CITATION,
    figures=(
        Figure("pareto_bytes", gathered_table("comparison", "table"),
               "fedclust.plots.comparison:plot_pareto",
               lambda config, ds: _pareto_caption(config, x="bytes"), options={"x": "bytes"}),
        Figure("pareto_rounds", gathered_table("comparison", "table"),
               "fedclust.plots.comparison:plot_pareto",
               lambda config, ds: _pareto_caption(config, x="rounds"), options={"x": "rounds"}),
        Figure("dropout", gathered_table("comparison", "table"),
               "fedclust.plots.comparison:plot_dropout", _dropout_caption,
               enabled=lambda config: len(_section(config)["dropout"]) > 1),
        Figure("heterogeneity", gathered_table("comparison", "heterogeneity"),
               "fedclust.plots.comparison:plot_heterogeneity", _heterogeneity_caption,
               enabled=lambda config: bool(natural_datasets(config))),
    ),
    tables=(Table("table", lambda config: [setting_part(ds, p) for ds, p in settings(config)]),
            Table("heterogeneity", lambda config: [heterogeneity_part(ds)
                                                   for ds in natural_datasets(config)])),
    claims="fedclust.claims.comparison:claims",
    claim_inputs=_claim_inputs,
)

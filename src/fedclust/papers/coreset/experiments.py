"""Distributed coresets (Balcan, Ehrlich & Liang, NeurIPS 2013), Sec. 5: cost against communication.

One *setting* is a data set, an objective (k-means, or k-median beyond the paper), a graph of
``n_sites`` sites and a partition scheme; one job runs a partition on every graph of its panel
(:func:`setting_runs`), recording for every construction and coreset size the cost of its
solution on the global data over that of Lloyd's algorithm on the global data in the same run
(:func:`baseline_runs`) and the points it sends over each graph. The steps of a run, and which
draws the graphs and constructions share, are in ``docs/algorithms.md`` (Distributed
coresets, the Sec. 5 experiment).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._validation import check_choice, check_int
from ...algorithms.distributed_coreset import (
    broadcast_costs,
    portion_route,
    send_portions,
    zhang_coreset,
)
from ...centralized import best_kmeans
from ...communication import Communication
from ...coreset import (
    equal_shares,
    local_solutions,
    proportional_shares,
    sample_coreset,
    theoretical_communication,
    theoretical_coreset_size,
)
from ...federation import Federation
from ...io import read_table, tidy
from ...lloyd import assign, tolerance
from ...partitions import SITE_WEIGHT_SCHEMES, site_weight_partition
from ...progress import progress
from ...seeds import generator_for, seed_for
from ...topology import Topology
from . import GRAPHS

__all__ = ["GRAPHS", "OBJECTIVES", "SETTING_IDS", "ALGORITHM_TITLES", "make_msd_mixture",
           "make_graph", "global_cost", "baseline_runs", "setting_runs", "n_clusters_of",
           "load_data", "baseline_table", "read_baseline", "setting_table", "diameter_table"]

OBJECTIVES = ("kmeans", "kmedian")
#: The columns that identify a row of a setting table (the rest is ``metric``, ``value``).
SETTING_IDS = ("dataset", "objective", "graph", "n_sites", "partition", "run", "seed",
               "n_clusters", "n_edges", "diameter", "tree_height", "theoretical_size",
               "algorithm", "network", "coreset_size")
#: How tables and legends name the constructions.
ALGORITHM_TITLES = {"distributed": "distributed coreset (Alg. 1-3)", "combine": "COMBINE",
                    "zhang": "Zhang et al. (tree)"}


def make_msd_mixture(n_samples: int = 515_345, n_features: int = 90, n_clusters: int = 50, *,
                     random_state=None):
    """A Gaussian mixture of YearPredictionMSD's shape (the paper's data: 515,345 x 90,
    k = 50), for the offline runs.

    Only the shape is the paper's; the model is ours (*not in the paper*): ``k`` centers
    ``N(0, 4^2 I)``, cluster proportions from a Dirichlet(2) (unequal sizes), isotropic noise
    of a per-cluster standard deviation uniform in [2, 6] -- overlapping clusters (a center
    gap of about 54 against a noise norm of 19 to 57), so that k-means has competing local
    optima and the cost ratio measures something.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    labels : ndarray of shape (n_samples,)
    """
    n = check_int(n_samples, "n_samples", low=1)
    d = check_int(n_features, "n_features", low=1)
    k = check_int(n_clusters, "n_clusters", low=1, high=n)
    rng = np.random.default_rng(random_state)
    centers = rng.normal(0.0, 4.0, (k, d))
    scales = rng.uniform(2.0, 6.0, k)
    labels = rng.choice(k, size=n, p=rng.dirichlet(np.full(k, 2.0)))
    X = rng.standard_normal((n, d))
    X *= scales[labels, None]
    X += centers[labels]
    return X, labels


def make_graph(name: str, n_sites: int, *, p: float = 0.3, attachment_links: int = 2,
               random_state=None) -> Topology:
    """One of the paper's graphs over ``n_sites`` sites (Sec. 5).

    ``"erdos_renyi"``: G(n, p) resampled until connected (``p = 0.3`` as printed);
    ``"grid"``: the square grid (``n_sites`` must be a square; the paper's 100 sites make a
    10 x 10 grid -- its shape is not printed); ``"preferential_attachment"``: Barabási-Albert
    with ``attachment_links`` links per new site (*not in the paper*).
    """
    check_choice(name, "graph", set(GRAPHS))
    n = check_int(n_sites, "n_sites", low=2)
    if name == "erdos_renyi":
        return Topology.erdos_renyi(n, p, random_state=random_state)
    if name == "grid":
        side = int(round(np.sqrt(n)))
        if side * side != n:
            raise ValueError(f"n_sites={n}: a grid needs a square number of sites "
                             f"(e.g. {side * side} or {(side + 1) ** 2})")
        return Topology.grid(side)
    return Topology.preferential_attachment(n, attachment_links, random_state=random_state)


def global_cost(X: np.ndarray, centers: np.ndarray, objective: str) -> float:
    """The objective's cost of the global data under ``centers`` (every row to its nearest
    center): sum of squared distances (k-means) or of distances (k-median)."""
    _, sq = assign(X, centers)
    sq = sq.astype(np.float64, copy=False)
    return float(sq.sum() if objective == "kmeans" else np.sqrt(sq).sum())


def _solve(points, weights, n_clusters, seeds, settings, objective):
    # Elkan's bounds for k-means: the same Lloyd iterations (the paper's solver is any
    # weighted alpha-approximation), several times faster at k = 50, where a coreset's
    # negative weights keep a few centers moving for all max_iter iterations
    # tol (k-means only) is relative, as scikit-learn's: scaled by the solved points' own
    # weighted variance, so a coreset and the global data stop at the same relative shift
    tol = tolerance(points, settings.get("tol", 0.0), weights) if objective == "kmeans" \
        else 0.0
    return best_kmeans(points, n_clusters, seeds, sample_weight=weights,
                       max_iter=settings["max_iter"], objective=objective,
                       algorithm="elkan" if objective == "kmeans" else "lloyd", tol=tol)


def _run_indices(runs):
    """``runs`` as run indices: ``0..runs-1`` for a count, else the indices given."""
    return range(runs) if isinstance(runs, (int, np.integer)) else [int(r) for r in runs]


def _seeds(seed: int, n_init: int, *names) -> list[int]:
    return [seed_for(seed, *names, f"restart={r}") for r in range(n_init)]


def n_clusters_of(dataset: str, settings: dict) -> int:
    """``k`` of a data set: the synthetic mixture's components (``coreset.synthetic``; the
    paper's k = 50 for YearPredictionMSD), else ``coreset.n_clusters[dataset]``."""
    from ...vocabulary import SYNTHETIC

    if dataset in SYNTHETIC:
        return int(settings["synthetic"]["n_clusters"])
    table = settings["n_clusters"]
    if dataset not in table:
        raise ValueError(f"coreset.n_clusters has no entry for data set {dataset!r}; give one "
                         f"(known: {sorted(table)})")
    return int(table[dataset])


def baseline_runs(X: np.ndarray, n_clusters: int, settings: dict, *, dataset: str,
                  objective: str, base_seed: int, runs,
                  show_progress: bool = True) -> pd.DataFrame:
    """Lloyd's algorithm on the global data, one per run (the denominator of every ratio).

    ``settings`` is the ``coreset`` config section (``n_init`` restarts of k-means++ and
    Lloyd, ``max_iter`` and the relative ``tol``, the same as on the coresets). ``runs``: how
    many (runs ``0..runs-1``) or which run indices; a run's result depends only on its index
    (its seed is named by it), so one run computed alone equals the same run computed among
    others.

    Returns
    -------
    DataFrame
        Tidy: ``dataset``, ``objective``, ``run``, ``seed`` and the metrics ``baseline_cost``
        and ``n_iter``.
    """
    check_choice(objective, "objective", set(OBJECTIVES))
    runs = _run_indices(runs)
    rows = []
    for run in progress(runs, desc=f"baseline {dataset} {objective}",
                        disable=not show_progress):
        seed = seed_for(base_seed, "coreset", dataset, objective, "baseline", f"run={run}")
        result = _solve(X, None, n_clusters, _seeds(seed, settings["n_init"]), settings,
                        objective)
        rows.append({"dataset": dataset, "objective": objective, "run": run, "seed": seed,
                     "baseline_cost": global_cost(X, result.centers, objective),
                     "n_iter": result.n_iter})
    return tidy(rows, ["dataset", "objective", "run", "seed"])


def _communication(route, sizes, d, itemsize, *, costs_network=None, ids=None):
    """The ledger of one construction: local costs (if shared) and coreset portions."""
    comm = Communication(float_bytes=itemsize)
    if costs_network is not None:
        broadcast_costs(costs_network, ids, comm)
    points = send_portions(comm, route, sizes, "coreset", d + 1)
    return comm, points


#: Partitions whose draw does not depend on the graph: one draw per run serves every graph.
_GRAPH_FREE_PARTITIONS = ("uniform", "similarity", "weighted")


def setting_runs(X: np.ndarray, n_clusters: int, settings: dict, *, dataset: str,
                 objective: str, graphs, n_sites: int, partition: str, runs,
                 base_seed: int, baseline: pd.DataFrame, zhang: bool = True,
                 show_progress: bool = True) -> pd.DataFrame:
    """Every run of one partition on each of ``graphs``: the distributed coreset, COMBINE and
    Zhang et al.

    A run draws every graph; the partition, the local solutions, the coresets of Algorithm 1
    and COMBINE and their solutions do not depend on the graph (only what they cost to send
    does), so for a partition whose weights do not involve the graph (uniform, similarity,
    weighted) they are drawn and solved once per run and shared by all graphs: the graphs
    are compared on the same draws, as the paper's curves compare the graphs. The degree
    partition draws them again on every graph. Zhang et al.'s construction merges up each
    graph's spanning tree and is computed per graph.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The global data.
    settings : dict
        The ``coreset`` config section: ``coreset_sizes`` (``t`` of the distributed coreset and
        COMBINE), ``zhang_coreset_sizes``, ``n_init``, ``max_iter``, ``tol`` (relative, as
        scikit-learn's; 0 or absent: until no label changes), ``local_max_iter``,
        ``erdos_renyi_p``, ``attachment_links``, ``theory`` (``epsilon``, ``delta``,
        ``constant``).
    graphs : sequence of str
        Graph names (:func:`make_graph`).
    runs : int or sequence of int
        How many (runs ``0..runs-1``) or which run indices. A run's rows depend only on its
        index (its seeds are named by it), so runs computed in separate calls (the pipeline's
        jobs of ``coreset.runs_per_job`` runs) give the rows of one call, in run order.
    baseline : DataFrame
        :func:`baseline_runs` of the same data set and objective (holding every run asked for).
    zhang : bool
        Whether to run Zhang et al.'s construction (Fig. 3).

    Returns
    -------
    DataFrame
        Tidy (:data:`SETTING_IDS` and ``metric``, ``value``;
        :func:`fedclust.papers.coreset.figures.wide_runs` pivots it back): every graph, run,
        construction, network (``graph`` or ``tree``) and coreset size with the metrics
        ``coreset_points`` (``|D|``, centers included), ``points_transmitted`` (points over
        hops, the paper's measure), the communication
        (:data:`fedclust.communication.LEDGER_COLUMNS`, the local costs included), ``cost``
        on the global data, ``baseline_cost``, ``cost_ratio``,
        ``fraction_of_theory`` (``|D|`` over Theorem 1's size), ``communication_bound``
        (Theorem 2's ``m`` times Theorem 1's size on the graph, Theorem 3's ``h`` times it on
        the tree) and ``fraction_of_communication_bound`` (``points_transmitted`` over it);
        the ids hold the graph's ``n_edges``, ``diameter``, ``tree_height`` and Theorem 1's
        ``theoretical_size``.
    """
    check_choice(objective, "objective", set(OBJECTIVES))
    check_choice(partition, "partition", set(SITE_WEIGHT_SCHEMES))
    graphs = list(graphs)
    if not graphs:
        raise ValueError("graphs must name at least one graph")
    k, d = n_clusters, X.shape[1]
    runs = _run_indices(runs)
    base = baseline[baseline["metric"] == "baseline_cost"].set_index("run")["value"]
    missing = sorted(set(runs) - set(base.index))
    if missing:
        raise ValueError(f"the baseline of {dataset} ({objective}) lacks runs {missing[:5]}")
    theory = settings["theory"]
    theoretical = theoretical_coreset_size(k, d, n_sites, epsilon=theory["epsilon"],
                                           delta=theory["delta"], objective=objective,
                                           constant=theory["constant"])
    shared_draws = partition in _GRAPH_FREE_PARTITIONS
    rows = []
    names = ("coreset", dataset, objective, f"n_sites={n_sites}", partition)
    steps = [(run, graph) for run in runs for graph in graphs]
    draws = None
    for run, graph in progress(steps, desc=f"{dataset} {objective} {partition}",
                               disable=not show_progress):
        seed = seed_for(base_seed, *names, graph, f"run={run}")
        network = make_graph(graph, n_sites, p=settings["erdos_renyi_p"],
                             attachment_links=settings["attachment_links"],
                             random_state=generator_for(seed, "graph"))
        if draws is None or draws.run != run or not shared_draws:
            draw_seed = seed_for(base_seed, *names, f"run={run}") if shared_draws else seed
            draws = _coreset_draws(X, network, partition, k, settings, objective, run,
                                   draw_seed)
        tree = network.spanning_tree(random_state=generator_for(seed, "tree"))
        federation, local = draws.federation, draws.local
        ids = federation.device_ids
        routes = {"graph": portion_route(network, ids), "tree": portion_route(tree, ids)}
        common = {"dataset": dataset, "objective": objective, "graph": graph,
                  "n_sites": n_sites, "partition": partition, "run": run, "seed": seed,
                  "n_clusters": k, "n_edges": network.n_edges, "diameter": network.diameter,
                  "tree_height": tree.height, "theoretical_size": theoretical}
        baseline_cost = float(base[run])

        def record(algorithm, net, t, coreset, comm, points, cost, common=common,
                   baseline_cost=baseline_cost):
            bound = theoretical_communication(theoretical, net, n_edges=common["n_edges"],
                                              tree_height=common["tree_height"])
            rows.append({**common, "algorithm": algorithm, "network": net, "coreset_size": t,
                         "coreset_points": coreset.size, "points_transmitted": points,
                         **comm.ledger(),
                         "cost": cost, "baseline_cost": baseline_cost,
                         "cost_ratio": cost / baseline_cost,
                         "fraction_of_theory": coreset.size / theoretical,
                         "communication_bound": bound,
                         "fraction_of_communication_bound": points / bound})

        for (algorithm, t), (coreset, cost) in draws.solved.items():
            sizes = coreset.portion_sizes(federation.n_devices)
            # COMBINE shares no costs; the distributed coreset on the tree sends its portions
            # to the root alone (Theorem 3), its solution stays there
            for net in (("graph", "tree") if algorithm == "distributed" else ("graph",)):
                shared = {"graph": network, "tree": tree}[net]
                comm, points = _communication(
                    routes[net], sizes, d, X.itemsize,
                    costs_network=shared if algorithm == "distributed" else None, ids=ids)
                record(algorithm, net, t, coreset, comm, points, cost)
        if not zhang:
            continue
        for t in settings["zhang_coreset_sizes"]:
            comm = Communication(float_bytes=X.itemsize)
            # the leaves' input is their own rows: their local solutions are the run's
            coreset, _ = zhang_coreset(federation, tree, k, t,
                                       rng=generator_for(seed, "zhang", f"t={t}"), comm=comm,
                                       max_iter=settings["local_max_iter"], objective=objective,
                                       leaf_local=local)
            result = _solve(coreset.points, coreset.weights, k,
                            _seeds(seed, settings["n_init"], "zhang", f"t={t}"), settings,
                            objective)
            record("zhang", "tree", t, coreset, comm, comm["points_transmitted"],
                   global_cost(X, result.centers, objective))
    return tidy(rows, SETTING_IDS)


@dataclass
class _Draws:
    """What one run of a setting draws and solves before any graph carries it: the sites'
    rows, their local solutions, and every coreset of Algorithm 1 and COMBINE with the cost
    of its solution on the global data, by ``(algorithm, t)``."""

    run: int
    federation: Federation
    local: object
    solved: dict


def _coreset_draws(X, network, partition, k, settings, objective, run, seed) -> _Draws:
    devices = site_weight_partition(X, network, partition,
                                    random_state=generator_for(seed, "partition"))
    federation = Federation.from_devices(X, devices, topology=network)
    local = local_solutions(federation, k, random_state=generator_for(seed, "local"),
                            max_iter=settings["local_max_iter"], objective=objective)
    solved = {}
    for t in settings["coreset_sizes"]:
        for algorithm in ("distributed", "combine"):
            shares = (proportional_shares(t, local.costs) if algorithm == "distributed"
                      else equal_shares(t, federation.n_devices))
            coreset = sample_coreset(federation, local, shares,
                                     random_state=generator_for(seed, algorithm, f"t={t}"))
            result = _solve(coreset.points, coreset.weights, k,
                            _seeds(seed, settings["n_init"], algorithm, f"t={t}"),
                            settings, objective)
            # one solution, one cost on the global data, whichever network carries it
            solved[algorithm, t] = coreset, global_cost(X, result.centers, objective)
    return _Draws(run, federation, local, solved)


def load_data(dataset: str, path, settings: dict, *, base_seed: int):
    """The global data of a setting, float32: the synthetic mixture (drawn from named seeds,
    the same for every job, in float64, then rounded) or a prepared data set's features
    (``path``, float32 as prepared).

    Returns
    -------
    X : ndarray of shape (n, d)
    title : str
        How figures name it (the preparation's title, which says which source was used).
    description : str
    """
    from ...vocabulary import SYNTHETIC

    if dataset in SYNTHETIC:
        syn = settings["synthetic"]
        X, _ = make_msd_mixture(syn["n_samples"], syn["n_features"], syn["n_clusters"],
                                random_state=seed_for(base_seed, "coreset", dataset, "data"))
        # float32, as every prepared data set (YearPredictionMSD's loader included) is read:
        # the stand-in runs at the precision the paper's data would, and Lloyd's products at
        # half the cost of float64
        X = X.astype(np.float32)
        title = f"{SYNTHETIC[dataset]} ({len(X):,} x {X.shape[1]}, {syn['n_clusters']} " \
                f"components)"
        return X, title, title
    if path is None:
        raise ValueError(f"data set {dataset!r} needs its prepared features file")
    from ...data.prepared import read_prepared

    data = read_prepared(path)
    return np.ascontiguousarray(data.X), data.title, data.description


def _titled(table: pd.DataFrame, title: str, description: str) -> pd.DataFrame:
    table.insert(1, "data", description)
    table.insert(2, "data_title", title)
    return table


def baseline_table(dataset: str, objective: str, features, settings: dict, *, runs: int,
                   base_seed: int, show_progress: bool = True) -> pd.DataFrame:
    """:func:`baseline_runs` of a data set (``features``: its prepared file, None for the
    synthetic mixture)."""
    X, title, description = load_data(dataset, features, settings, base_seed=base_seed)
    table = baseline_runs(X, n_clusters_of(dataset, settings), settings, dataset=dataset,
                          objective=objective, base_seed=base_seed, runs=runs,
                          show_progress=show_progress)
    return _titled(table, title, description)


def read_baseline(baseline) -> pd.DataFrame:
    """A baseline table: a DataFrame as it is, or its CSV files (one per run) concatenated."""
    if isinstance(baseline, pd.DataFrame):
        return baseline
    paths = [baseline] if isinstance(baseline, (str, bytes)) or hasattr(baseline, "__fspath__") \
        else list(baseline)
    return pd.concat([read_table(path) for path in paths], ignore_index=True)


def setting_table(dataset: str, objective: str, features, baseline, settings: dict, *,
                  graphs, n_sites: int, partition: str, base_seed: int, runs=None,
                  show_progress: bool = True) -> pd.DataFrame:
    """:func:`setting_runs` of one Figs 2-3 (or k-median) partition on ``graphs``: ``runs``
    (run indices; None: ``settings["runs"]`` runs from 0);
    ``baseline`` is the :func:`baseline_table` (a DataFrame, or its CSV files, e.g. one per
    run)."""
    X, title, description = load_data(dataset, features, settings, base_seed=base_seed)
    baseline = read_baseline(baseline)
    table = setting_runs(X, n_clusters_of(dataset, settings), settings, dataset=dataset,
                         objective=objective, graphs=graphs, n_sites=n_sites,
                         partition=partition,
                         runs=settings["runs"] if runs is None else runs,
                         base_seed=base_seed, baseline=baseline, show_progress=show_progress)
    return _titled(table, title, description)


def diameter_table(dataset: str, side: int, features, baseline, settings: dict, *,
                   base_seed: int, show_progress: bool = True) -> pd.DataFrame:
    """Beyond the paper: every run on the ``side x side`` grid (``settings["diameter"]``: the
    partition, one coreset size for the distributed coreset and COMBINE and one for Zhang
    et al., the runs)."""
    spec = settings["diameter"]
    one_size = {**settings, "coreset_sizes": [spec["coreset_size"]],
                "zhang_coreset_sizes": [spec["zhang_coreset_size"]], "runs": spec["runs"]}
    return setting_table(dataset, "kmeans", features, baseline, one_size, graphs=["grid"],
                         n_sites=side * side, partition=spec["partition"],
                         base_seed=base_seed, show_progress=show_progress)

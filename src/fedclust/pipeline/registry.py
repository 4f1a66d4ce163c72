"""What each paper's pipeline produces, declared once: figures, gathered tables, claims.

A paper module (:mod:`fedclust.pipeline.kfed`, :mod:`fedclust.pipeline.localkmeans`) declares
one :class:`Paper`. The workflow reads it for everything that would otherwise be repeated:
the targets of ``rule all``, the wildcard constraints of the generic ``figure``, ``gather`` and
``claims`` rules, each figure's input tables, plot function and caption, and the tables the
claims are computed from. Adding a figure is one :class:`Figure` entry (plus its plot function
in :mod:`fedclust.plots` and its caption function); no rule, script or config key changes.

This module and the paper modules import nothing heavy: the Snakefile reads them at parse
time. Plot and claim functions are named by ``"module:function"`` strings and imported only
by the jobs that call them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module

__all__ = ["Figure", "Table", "Paper", "papers", "paper", "targets", "figure_names",
           "figure", "figure_inputs", "figure_caption", "stated_differences", "figure_pattern",
           "gathered_tables", "table_parts", "claims_inputs", "resolve", "draw", "check_claims"]


def _always(config) -> bool:
    return True


@dataclass(frozen=True)
class Table:
    """A results table gathered from per-setting parts: ``results/<paper>/<name>.csv``.

    Attributes
    ----------
    name : str
    parts : callable(config) -> list of str
        The part files (written by the paper's own rules) concatenated into it.
    """

    name: str
    parts: Callable[[dict], list[str]]


@dataclass(frozen=True)
class Figure:
    """One figure: ``figures/<paper>_<name>.png`` (and ``.pdf``).

    Attributes
    ----------
    name : str
        File stem after ``<paper>_``; a ``{dataset}`` field makes one figure per data set of
        ``datasets(config)``.
    inputs : callable(config, dataset) -> list of str
        The results tables it is drawn from (its only inputs).
    plot : str
        ``"module:function"``; the function takes the tables (as DataFrames, in the order of
        ``inputs``) and ``options`` and returns a matplotlib figure.
    caption : callable(config, dataset) -> str
        The report caption: what it shows, which paper figure it reproduces, every deviation;
        numbers come from the config, never from literals.
    enabled : callable(config) -> bool
    datasets : callable(config) -> list of str, optional
        For a per-data-set figure.
    options : dict
        Constant keyword arguments of the plot function.
    instance_pattern : str, optional
        The regular expression ``{dataset}`` matches in file names when the instances are not
        data sets (e.g. the sweeps a config declares); by default any data set's name.
    """

    name: str
    inputs: Callable[[dict, str | None], list[str]]
    plot: str
    caption: Callable[[dict, str | None], str]
    enabled: Callable[[dict], bool] = _always
    datasets: Callable[[dict], list[str]] | None = None
    options: dict = field(default_factory=dict)
    instance_pattern: str | None = None

    def instances(self, config) -> dict[str, str | None]:
        """``{figure name: data set}`` of every instance the config enables."""
        if not self.enabled(config):
            return {}
        if self.datasets is None:
            return {self.name: None}
        return {self.name.format(dataset=ds): ds for ds in self.datasets(config)}


@dataclass(frozen=True)
class Paper:
    """A paper's pipeline.

    Attributes
    ----------
    key : str
        Its config section, results folder (``results/<key>/``) and figure prefix.
    title : str
        The citation shown in reports.
    figures : tuple of Figure
    tables : tuple of Table
        Tables gathered from parts by the generic ``gather`` rule.
    claims : str
        ``"module:function"`` turning ``{name: DataFrame}`` and the paper targets into claims.
    claim_inputs : callable(config) -> dict of str -> str
        The tables the claims read, by name.
    extra_targets : callable(config) -> list of str
        Other outputs ``rule all`` asks for (e.g. a rendered table).
    """

    key: str
    title: str
    figures: tuple[Figure, ...]
    tables: tuple[Table, ...]
    claims: str
    claim_inputs: Callable[[dict], dict[str, str]]
    extra_targets: Callable[[dict], list[str]] = lambda config: []

    def enabled(self, config) -> bool:
        return bool(config[self.key]["enabled"])


def gathered_table(paper_key: str, table: str) -> Callable:
    """The inputs of a figure drawn from one gathered table, ``results/<paper>/<table>.csv``."""
    return lambda config, dataset=None: [f"results/{paper_key}/{table}.csv"]


def papers() -> dict[str, Paper]:
    """Every paper of the pipeline, by key."""
    from . import comparison, coreset, fedkmeans, kfed, localkmeans
    return {p.key: p for p in (kfed.PAPER, localkmeans.PAPER, coreset.PAPER, fedkmeans.PAPER,
                               comparison.PAPER)}


def paper(key: str) -> Paper:
    known = papers()
    if key not in known:
        raise ValueError(f"unknown paper {key!r}; known: {sorted(known)}")
    return known[key]


def figure_names(config) -> dict[str, list[str]]:
    """``{paper: [figure names]}`` of every enabled figure."""
    return {key: [name for fig in p.figures for name in fig.instances(config)]
            for key, p in papers().items() if p.enabled(config)}


def figure(paper_key: str, name: str, config) -> tuple[Figure, str | None]:
    """The figure called ``name`` of a paper and its data set (None for a single figure)."""
    for fig in paper(paper_key).figures:
        instances = fig.instances(config)
        if name in instances:
            return fig, instances[name]
    raise ValueError(f"{paper_key} has no enabled figure {name!r} in this config; enabled: "
                     f"{figure_names(config).get(paper_key, [])}")


def figure_inputs(paper_key: str, name: str, config) -> list[str]:
    """The results tables figure ``name`` is drawn from."""
    fig, dataset = figure(paper_key, name, config)
    return fig.inputs(config, dataset)


def figure_caption(paper_key: str, name: str, config) -> str:
    """The report caption of figure ``name``, rendered from the config."""
    fig, dataset = figure(paper_key, name, config)
    return fig.caption(config, dataset)


def figure_pattern(paper_key: str | None = None) -> str:
    """A regular expression matching every figure name (of one paper, or of all)."""
    from .data import SYNTHETIC, dataset_names
    any_dataset = "(?:" + "|".join(map(re.escape, [*dataset_names(), *SYNTHETIC])) + ")"
    names = []
    for p in ([paper(paper_key)] if paper_key else papers().values()):
        for fig in p.figures:
            field_pattern = any_dataset if fig.instance_pattern is None \
                else f"(?:{fig.instance_pattern})"
            names.append(field_pattern.join(map(re.escape, fig.name.split("{dataset}"))))
    return "|".join(names)


def gathered_tables(config=None) -> dict[str, list[str]]:
    """``{paper: [table names]}`` gathered from parts."""
    return {key: [t.name for t in p.tables] for key, p in papers().items()}


def table_parts(paper_key: str, name: str, config) -> list[str]:
    """The part files of a gathered table."""
    for table in paper(paper_key).tables:
        if table.name == name:
            return table.parts(config)
    raise ValueError(f"{paper_key} gathers no table {name!r}")


def claims_inputs(paper_key: str, config) -> dict[str, str]:
    return paper(paper_key).claim_inputs(config)


def targets(config) -> list[str]:
    """Every output ``rule all`` asks for under ``config``."""
    out = ["results/reproduction.md", "results/reproduction.csv", "results/run_config.yaml"]
    for key, p in papers().items():
        if not p.enabled(config):
            continue
        out.append(f"results/{key}/claims.csv")
        out += p.extra_targets(config)
        for name in figure_names(config)[key]:
            out += [f"figures/{key}_{name}.png", f"figures/{key}_{name}.pdf"]
    return out


def resolve(dotted: str) -> Callable:
    """The function named ``"module:function"``."""
    module, _, name = dotted.partition(":")
    return getattr(import_module(module), name)


def draw(paper_key: str, name: str, tables: list, config):
    """Figure ``name`` drawn from its tables (DataFrames, in the order of its inputs)."""
    fig, _ = figure(paper_key, name, config)
    return resolve(fig.plot)(*tables, **fig.options)


def stated_differences(config, paper_key: str, section: str) -> str:
    """Every known reason this pipeline's setting can differ from the paper
    (``why_ours_differs``) under ``paper_key.section`` of the paper targets, as caption text
    ("" if none). The same texts follow the measured reason of a missed check in the
    reproduction report, so a figure's caption and the report give one reason, stated once in
    the targets file."""
    from ..reproduction import load_targets

    texts = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("why_ours_differs"):
                texts.append(str(node["why_ours_differs"]).strip())
            for value in node.values():
                walk(value)

    walk(load_targets(config["paper_targets"]).get(paper_key, {}).get(section, {}))
    if not texts:
        return ""
    return " Where our setting can differ from the paper, and why: " + " ".join(
        dict.fromkeys(texts))


def check_claims(paper_key: str, tables: dict, targets: dict, declared=None) -> list:
    """A paper's claims from its tables (``{name: DataFrame}``) and its paper targets, a
    reported row per setting its experiments skipped, and the rows the profile declared
    scale-limited (``declared``: :func:`declared_limits`) marked so."""
    from ..reproduction import declare_profile, skipped_claims

    module = paper(paper_key).claims.partition(":")[0]
    claims = resolve(paper(paper_key).claims)(tables, targets)
    claims += skipped_claims(import_module(module).PAPER, paper_key, tables)
    return declare_profile(claims, declared or {})


def declared_limits(config) -> dict:
    """The profile's scale-limited targets, ``{target key: reason}`` (empty without config)."""
    return dict((config or {}).get("reproduction", {}).get("not_at_this_profile", {}))

"""What a paper's ``declare`` module declares: its :class:`Paper`, with its :class:`Figure` and
:class:`Table` entries, and the helpers their inputs and caption contexts are built with (the
captions' text is in templates in the paper's ``captions/``, :mod:`fedclust.pipeline.captions`).
Below both the papers (which build their ``PAPER`` from these) and
:mod:`fedclust.pipeline.registry` (which collects them); nothing heavy is imported (the
Snakefile reads this at parse time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Figure", "Table", "Paper", "gathered_table", "stated_differences",
           "differences_context"]


def _always(config) -> bool:
    return True


def _nothing_computed(config, dataset=None) -> dict:
    return {}


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
        ``datasets(config)``. The paper's ``figures`` module draws it with the function of the
        same name, the field left out (:attr:`function`): it takes the tables (as DataFrames,
        in the order of ``inputs``) and ``options`` and returns a matplotlib figure.
    inputs : callable(config, dataset) -> list of str
        The results tables it is drawn from (its only inputs).
    caption : str
        The report caption's template, ``"<paper>/<file>"`` for the paper's
        ``captions/<file>`` (e.g. ``"kfed/fig1_accuracy_vs_separation.rst"``; the conventions are in
        :mod:`fedclust.pipeline.captions`): what the figure shows, which paper figure it
        reproduces, every deviation; numbers come from the config, never from literals.
    caption_context : callable(config, dataset) -> dict
        What the template needs that is computed rather than read from the config (e.g. the
        stated reasons to differ, :func:`differences_context`); the template also sees the
        config, the data set, the paper's citation, ``options`` and the data sets' titles.
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
    caption: str
    caption_context: Callable[[dict, str | None], dict] = _nothing_computed
    enabled: Callable[[dict], bool] = _always
    datasets: Callable[[dict], list[str]] | None = None
    options: dict = field(default_factory=dict)
    instance_pattern: str | None = None

    @property
    def function(self) -> str:
        """The name of the function that draws it: ``name`` without its ``{dataset}`` field
        (``"fig5_separation_{dataset}"`` is drawn by ``fig5_separation``)."""
        return self.name.replace("_{dataset}", "").replace("{dataset}", "")

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
        Tables gathered from parts by the generic ``gather`` rule. The paper's ``claims``
        module turns them and the paper targets into claims (its function ``claims``).
    claim_inputs : callable(config) -> dict of str -> str
        The tables the claims read, by name.
    extra_targets : callable(config) -> list of str
        Other outputs ``rule all`` asks for (e.g. a rendered table).
    table_captions : dict of str -> str
        The caption templates of the tables the paper's own rules put in the report, by name
        (``{"table1": "kfed/table1.rst"}``); they see what a figure's template sees, without
        a data set or options.
    """

    key: str
    title: str
    figures: tuple[Figure, ...]
    tables: tuple[Table, ...]
    claim_inputs: Callable[[dict], dict[str, str]]
    extra_targets: Callable[[dict], list[str]] = lambda config: []
    table_captions: dict[str, str] = field(default_factory=dict)

    def enabled(self, config) -> bool:
        return bool(config[self.key]["enabled"])


def gathered_table(paper_key: str, table: str) -> Callable:
    """The inputs of a figure drawn from one gathered table, ``results/<paper>/<table>.csv``."""
    return lambda config, dataset=None: [f"results/{paper_key}/{table}.csv"]


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


def differences_context(paper_key: str, section: str) -> Callable:
    """A figure's caption context holding the stated reasons to differ of ``paper_key.section``
    (:func:`stated_differences`), as ``differences``."""
    return lambda config, dataset=None: {
        "differences": stated_differences(config, paper_key, section)}

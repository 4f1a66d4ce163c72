"""What each paper's pipeline produces, declared once: figures, gathered tables, claims.

Each paper's ``declare`` module (:mod:`fedclust.papers.kfed.declare`, ...) declares one
:class:`~fedclust.pipeline.declarations.Paper`; the papers are found by name
(:data:`fedclust.papers.PAPERS`), never imported by the core. The workflow reads them for the
targets of ``rule all``, the wildcard constraints of the generic ``figure``, ``gather`` and
``claims`` rules, each figure's input tables, plot function and caption, and the tables the
claims are computed from. A figure is one :class:`Figure` entry, the function of its name in
the paper's ``figures`` module and its caption template in the paper's ``captions/``; no rule,
script or config key changes. Nothing heavy is imported here (the Snakefile reads this at
parse time); the plot and claim functions are imported only by the jobs that call them.
"""

from __future__ import annotations

import re
from importlib import import_module

# the declarations the papers build their PAPER from (a module below both)
from .declarations import Figure, Paper, Table, stated_differences

__all__ = ["Figure", "Table", "Paper", "papers", "paper", "targets", "figure_names",
           "figure", "plot_function", "figure_inputs", "figure_caption", "table_caption",
           "caption_templates",
           "stated_differences", "figure_pattern", "gathered_tables", "table_parts",
           "claims_inputs", "check_claims", "catalogue", "check_figure_name"]


def papers() -> dict[str, Paper]:
    """Every paper of the pipeline, by key."""
    from ..papers import PAPERS

    # by name, so that no module of the core imports a paper's
    return {key: import_module(f"fedclust.papers.{key}.declare").PAPER for key in PAPERS}


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


def plot_function(paper_key: str, name: str, config) -> str:
    """The ``"module:function"`` that draws figure ``name``: the function named as the figure
    (:attr:`Figure.function`) in the paper's ``figures`` module."""
    fig, _ = figure(paper_key, name, config)
    return f"fedclust.papers.{paper_key}.figures:{fig.function}"


def figure_inputs(paper_key: str, name: str, config) -> list[str]:
    """The results tables figure ``name`` is drawn from."""
    fig, dataset = figure(paper_key, name, config)
    return fig.inputs(config, dataset)


def _caption_context(paper_key: str, config, dataset=None, options=None) -> dict:
    """What every caption template sees (:mod:`fedclust.pipeline.captions`)."""
    from .data import DATASETS, SYNTHETIC, title_of
    return {"config": config, "dataset": dataset, "citation": paper(paper_key).title,
            "options": options or {},
            "titles": {name: title_of(name) for name in [*DATASETS, *SYNTHETIC]}}


def figure_caption(paper_key: str, name: str, config) -> str:
    """The report caption of figure ``name``, rendered from the config by its template."""
    from .captions import render

    fig, dataset = figure(paper_key, name, config)
    return render(fig.caption, {**_caption_context(paper_key, config, dataset, fig.options),
                                **fig.caption_context(config, dataset)})


def table_caption(paper_key: str, name: str, config) -> str:
    """The report caption of a table the paper's own rules put in the report (e.g. k-FED's
    ``table1``), rendered from the config by its template."""
    from .captions import render

    templates = paper(paper_key).table_captions
    if name not in templates:
        raise ValueError(f"{paper_key} declares no table caption {name!r}; declared: "
                         f"{sorted(templates)}")
    return render(templates[name], _caption_context(paper_key, config))


def caption_templates() -> set[str]:
    """Every caption template a figure or table of any paper declares (enabled or not)."""
    return {template for p in papers().values()
            for template in [*(fig.caption for fig in p.figures), *p.table_captions.values()]}


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


def catalogue(config) -> list[dict]:
    """Every table and figure the pipeline makes under ``config``, in the order of the papers:
    ``{"paper", "kind", "file", "about"}``, ``about`` the first sentence of a figure's caption
    (what ``python -m fedclust.pipeline.targets`` prints)."""
    rows = [{"paper": "all", "kind": "report", "file": "results/reproduction.md",
             "about": "Every paper's reproduced numbers against the printed ones."},
            {"paper": "all", "kind": "report", "file": "results/run_config.yaml",
             "about": "The run's configuration, package versions and provenance."}]
    for key, p in papers().items():
        if not p.enabled(config):
            continue
        rows.append({"paper": key, "kind": "claims", "file": f"results/{key}/claims.csv",
                     "about": f"{p.title}: reproduced against printed."})
        for table in p.tables:
            rows.append({"paper": key, "kind": "table", "file": f"results/{key}/{table.name}.csv",
                         "about": "tidy table: every setting and run"})
        for extra in p.extra_targets(config):
            rows.append({"paper": key, "kind": "table", "file": extra, "about": ""})
        for name in figure_names(config)[key]:
            rows.append({"paper": key, "kind": "figure", "file": f"figures/{key}_{name}.png",
                         "about": _gist(figure_caption(key, name, config))})
    return rows


def _gist(caption: str, width: int = 90) -> str:
    """A caption's opening: after its "Figure N:" prefix, up to the first ";" or sentence end,
    at most ``width`` characters (cut at a word, marked "...")."""
    text = caption.split(": ", 1)[-1] if ": " in caption[:120] else caption
    text = re.split(r"; |\. (?=[A-Z])", text, maxsplit=1)[0].rstrip(".")
    return text if len(text) <= width else text[:width].rsplit(" ", 1)[0] + " ..."


def check_figure_name(target: str, config) -> None:
    """Raise naming the nearest figure files when ``target`` (``figures/<name>.<ext>``) is
    not a figure of this config (a mistyped name), instead of Snakemake's generic "no rule
    to produce"."""
    import difflib

    known = [f"figures/{key}_{name}.{ext}" for key, names in figure_names(config).items()
             for name in names for ext in ("png", "pdf")]
    if target in known:
        return
    same_kind = [k for k in known if k.endswith(target[target.rfind("."):])]
    nearest = difflib.get_close_matches(target, same_kind, n=3, cutoff=0.5)
    raise ValueError(f"no figure {target} in this config; "
                     + (f"did you mean {' or '.join(nearest)}? " if nearest else "")
                     + "python -m fedclust.pipeline.targets lists every table and figure")


def check_claims(paper_key: str, tables: dict, targets: dict, declared=None,
                 config=None) -> list:
    """A paper's claims from its tables (``{name: DataFrame}``) and its paper targets, a
    reported row per setting its experiments skipped, the rows the profile declared
    scale-limited (``declared``: :func:`declared_limits`) marked so, and the stand-ins of the
    run's ``config`` (the paper module's ``setup_stand_ins``, where it has one) named in the
    rows they touch."""
    from ..reproduction import declare_profile, name_stand_ins, skipped_claims

    module = import_module(f"fedclust.papers.{paper(paper_key).key}.claims")
    claims = module.claims(tables, targets)
    claims += skipped_claims(module.PAPER, paper_key, tables)
    if config is not None and hasattr(module, "setup_stand_ins"):
        name_stand_ins(claims, module.setup_stand_ins(config, targets))
    return declare_profile(claims, declared or {})


def declared_limits(config) -> dict:
    """The profile's scale-limited targets, ``{target key: reason}`` (empty without config)."""
    return dict((config or {}).get("reproduction", {}).get("not_at_this_profile", {}))

"""Report captions: Jinja templates in each paper's folder, rendered from the run's config.

Every caption of the report (each figure's, and those of the tables a paper's own rules put in
it) is a Jinja template in ``fedclust/papers/<paper>/captions/``, named ``"<paper>/<file>"``;
the paper's declarations only say which template a figure or table uses and compute what it
needs (:class:`~fedclust.pipeline.declarations.Figure`'s ``caption`` and ``caption_context``).
The folder's conventions: ``docs/library.md`` (Caption templates).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

import jinja2

__all__ = ["CAPTIONS", "render"]

#: The folder of the papers' folders: template ``"kfed/table1.rst"`` is
#: ``<CAPTIONS>/kfed/captions/table1.rst``.
CAPTIONS = Path(__file__).resolve().parents[1] / "papers"


def _formatted(value, spec: str) -> str:
    """``format(value, spec)``: how a template writes an f-string's ``{value:spec}``."""
    return format(value, spec)


class _SubscriptIsKeyEnvironment(jinja2.Environment):
    """A subscript of a mapping is only ever its key: Jinja falls back to an attribute, so a
    config section lacking key ``values`` would render ``cfg["values"]`` as the dict's
    ``values`` method instead of failing."""

    def getitem(self, obj, argument):
        if isinstance(obj, Mapping):
            try:
                return obj[argument]
            except (KeyError, TypeError):
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)


@cache
def _environment(directory: Path) -> jinja2.Environment:
    if not directory.is_dir():
        raise FileNotFoundError(f"no caption templates at {directory}")
    if directory == CAPTIONS:
        # found by folder, not by importing the papers (the core never imports them)
        loader = jinja2.PrefixLoader({paper.name: jinja2.FileSystemLoader(paper / "captions")
                                      for paper in sorted(directory.iterdir())
                                      if (paper / "captions").is_dir()})
    else:
        loader = jinja2.FileSystemLoader(directory)
    environment = _SubscriptIsKeyEnvironment(loader=loader,
                                             undefined=jinja2.StrictUndefined,
                                             autoescape=False)
    environment.filters["formatted"] = _formatted
    return environment


def render(template: str, context: dict, directory: Path | str | None = None) -> str:
    """The caption ``template`` renders from ``context``, its whitespace collapsed to single
    spaces.

    Parameters
    ----------
    template : str
        ``"<paper>/<file>"``, e.g. ``"kfed/table1.rst"`` (with ``directory``, its path there).
    context : dict
        The names the template reads.
    directory : path, optional
        A folder of templates to use instead of the papers' own.

    Returns
    -------
    str
        One line.

    Raises
    ------
    jinja2.UndefinedError
        When the template reads a name (or key) the context lacks.
    """
    environment = _environment(Path(directory or CAPTIONS).resolve())
    return " ".join(environment.get_template(template).render(context).split())

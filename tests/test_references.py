"""Every name the documentation cites exists: no drift between the prose and the code.

The pages (README.md, config/README.md, docs/*.md) cite ``fedclust.…`` names in backticks;
the docstrings cite names in Sphinx roles (``:func:`…```, ``:class:`…``` and the like),
qualified or as the module sees them. Each must resolve to an object: a module imported, then
attributes looked up.
"""

import importlib
import re

import pytest

from .conftest import REPO

PAGES = [REPO / "README.md", REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# every module but the entry points, which run on import
SOURCES = sorted(p for p in (REPO / "src").rglob("*.py") if p.name != "__main__.py")
CITED_ON_PAGES = re.compile(r"`(fedclust(?:\.[A-Za-z_]\w*)+)")
CITED_IN_DOCSTRINGS = re.compile(
    r":(?:func|class|mod|meth|attr|data|exc|obj):`~?\.?([A-Za-z_][\w.]*)`")


def resolves(name: str, namespace=None) -> bool:
    """Whether dotted ``name`` is an attribute chain of ``namespace`` (a module), or a module
    (the longest importable prefix) followed by one."""
    if namespace is not None:
        obj = namespace
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
            return True
        except AttributeError:
            pass
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
            return True
        except AttributeError:
            return False
    return False


def module_of(path):
    parts = path.relative_to(REPO / "src").with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def test_every_name_the_pages_cite_exists():
    missing = sorted({f"{page.relative_to(REPO)}: {name}" for page in PAGES
                      for name in CITED_ON_PAGES.findall(page.read_text())
                      if not resolves(name)})
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_of(p))
def test_every_name_a_docstring_cites_exists(path):
    """A name resolves in the module (as imported there, a class's method named alone), in
    its package, under ``fedclust``, or as an importable dotted name (numpy, scikit-learn)."""
    try:
        module = importlib.import_module(module_of(path))
    except ImportError as error:  # an optional extra (Flower) not installed
        pytest.skip(f"{module_of(path)}: {error}")
    package = module_of(path).rsplit(".", 1)[0]
    classes = [v for v in vars(module).values() if isinstance(v, type)]
    missing = []
    for name in CITED_IN_DOCSTRINGS.findall(path.read_text()):
        if (resolves(name, module) or resolves(f"{package}.{name}")
                or resolves(f"fedclust.{name}") or resolves(name)
                or any(hasattr(cls, name.split(".")[0]) for cls in classes)):
            continue
        missing.append(name)
    assert not missing, f"{path.relative_to(REPO)} cites names that do not exist: {missing}"

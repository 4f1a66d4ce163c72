"""The import structure: no circle among the library's modules, counted as a reader would count
it (every import statement, at module level or inside a function)."""

import ast

import networkx as nx

from .conftest import REPO

SRC = REPO / "src"


def _module_name(path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, name: str, modules: set[str]) -> set[str]:
    """The fedclust modules that ``path`` (module ``name``) imports, resolved to modules of
    the tree (``from .x import y`` names module ``x.y`` if it is one, else ``x``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in found if m in modules and m != name}


def import_graph() -> nx.DiGraph:
    paths = {_module_name(p): p for p in (SRC / "fedclust").rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(paths)
    for name, path in paths.items():
        graph.add_edges_from((name, target) for target in _imports(path, name, set(paths)))
    return graph


def test_no_import_circle_in_the_library():
    graph = import_graph()
    # a package's __init__ importing its own modules is how Python packages work, not a circle
    # of the design: count circles between modules of different packages or of one package's
    # modules, with the package's __init__ left out
    packages = {n for n in graph if (SRC / n.replace(".", "/") / "__init__.py").exists()}
    modules = graph.subgraph(set(graph) - packages)
    circles = list(nx.simple_cycles(modules))
    assert not circles, f"import circles: {circles[:5]}"


def test_the_circle_check_sees_function_level_imports(tmp_path):
    """The graph counts an import inside a function as an arrow (a circle through one is still
    a circle for a reader)."""
    graph = import_graph()
    # pipeline/localkmeans.py imports experiments/localkmeans inside a caption context function
    # only
    assert graph.has_edge("fedclust.pipeline.localkmeans", "fedclust.experiments.localkmeans")
    assert graph.has_edge("fedclust.pipeline.registry", "fedclust.pipeline.kfed")


def test_every_partitioner_lives_in_the_partition_module():
    """One module assigns rows to devices (fedclust.partitions): no other module of src/
    defines a partitioner, and the experiments take theirs from it."""
    import re

    defined = {}
    for path in (SRC / "fedclust").rglob("*.py"):
        for name in re.findall(r"^def (\w*partition|partition_devices)\(", path.read_text(),
                               flags=re.M):
            defined.setdefault(name, []).append(path.relative_to(SRC).as_posix())
    elsewhere = {name: paths for name, paths in defined.items()
                 if paths != ["fedclust/partitions.py"]}
    assert not elsewhere, f"partitioners outside fedclust/partitions.py: {elsewhere}"
    from fedclust import partitions

    assert set(partitions.__all__) >= set(defined)


def test_the_layers_read_top_to_bottom():
    """The numeric layers (experiments, summaries, claims, plots) take the pipeline's names
    from the ground floor (fedclust.vocabulary), never from the pipeline's catalogue above
    them; the vocabulary imports no module of the library (tests/test_summaries.py checks that
    claims and summaries never import matplotlib)."""
    graph = import_graph()
    numeric = ("experiments", "summaries", "claims", "plots")
    upward = sorted((a, b) for a, b in graph.edges
                    if a.split(".")[1] in numeric and b.startswith("fedclust.pipeline"))
    assert not upward, f"numeric code importing the pipeline: {upward}"
    assert not list(graph.successors("fedclust.vocabulary"))
    uses_vocabulary = {a.split(".")[1] for a in graph.predecessors("fedclust.vocabulary")}
    assert set(numeric) <= uses_vocabulary | {"summaries"}, uses_vocabulary


#: The packages above the core, and which of them each may import (the core -- every other
#: module of fedclust -- imports none of them): a figure or a claim reads results, it never
#: runs an experiment; the runtime deploys the core's estimators.
_UPPER = {"experiments": set(), "summaries": set(), "claims": {"summaries"},
          "plots": {"summaries"}, "runtime": set(),
          "pipeline": {"experiments", "summaries", "claims", "plots"}}


def _layer(module: str) -> str:
    part = module.split(".")[1] if "." in module else ""
    return part if part in _UPPER else "core"


def _against_layers(graph) -> list:
    return sorted((a, b) for a, b in graph.edges
                  if _layer(a) != _layer(b) and _layer(b) != "core"
                  and _layer(b) not in _UPPER.get(_layer(a), set()))


def test_imports_point_down_the_layers_only():
    """No core module imports a package above it; plots and claims never import experiments
    (what both need from an experiment's module lives in the core or in summaries); no upper
    package imports another beside the allowed ones (``_UPPER``)."""
    wrong = _against_layers(import_graph())
    assert not wrong, f"imports against the layers: {wrong}"


def test_the_layer_check_finds_an_upward_import():
    graph = import_graph()
    graph.add_edge("fedclust.lloyd", "fedclust.plots.kfed")
    graph.add_edge("fedclust.plots.comparison", "fedclust.experiments.comparison")
    assert _against_layers(graph) == [("fedclust.lloyd", "fedclust.plots.kfed"),
                                      ("fedclust.plots.comparison",
                                       "fedclust.experiments.comparison")]

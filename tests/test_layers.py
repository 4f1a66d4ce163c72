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
    # localkmeans' declarations import its SNR formulas inside a caption context function only
    assert graph.has_edge("fedclust.papers.localkmeans.declare",
                          "fedclust.papers.localkmeans.snr")
    assert graph.has_edge("fedclust.pipeline.registry", "fedclust.pipeline.declarations")


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


def test_the_vocabulary_is_the_ground_floor():
    """The names every layer shares (fedclust.vocabulary) import no module of the library."""
    assert not list(import_graph().successors("fedclust.vocabulary"))


def _paper(module: str) -> str | None:
    """The paper whose folder holds ``module`` (None for the core)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "papers" else None


#: A paper module that reads results (a figure, a claim, the statistics both show); every
#: other module of a paper's folder but its declarations and names computes them.
_READERS = {"figures", "claims", "summaries"}
#: The one paper that may import others: the comparison runs every paper's algorithm at that
#: paper's printed settings. And federated k-means' real-data figure uses the k that k-FED's
#: separation analysis chooses, declared there.
_ACROSS = {("comparison", "kfed"), ("comparison", "fedkmeans"), ("comparison", "coreset"),
           ("fedkmeans", "kfed")}


def _against_layers(graph) -> list:
    """The import edges that point the wrong way: the core to a paper; a figure, claim or
    summary to an experiment; a claim or summary to a figure (numeric code never imports
    plotting); a paper to another paper outside :data:`_ACROSS`."""
    wrong = []
    for a, b in graph.edges:
        pa, pb = _paper(a), _paper(b)
        if pb is None:
            continue
        ka, kb = a.split(".")[-1], b.split(".")[-1]
        if pa is None and b != "fedclust.papers":
            wrong.append((a, b))
        elif pa is not None and pa != pb and (pa, pb) not in _ACROSS:
            wrong.append((a, b))
        elif ka in _READERS and kb not in _READERS | {"declare", pb}:
            wrong.append((a, b))
        elif ka in {"claims", "summaries"} and kb == "figures":
            wrong.append((a, b))
    return sorted(wrong)


def test_imports_point_from_the_papers_to_the_core_only():
    """No core module imports a paper's; within a paper, figures and claims read results and
    never import an experiment; papers import each other only as :data:`_ACROSS` says."""
    graph = import_graph()
    wrong = _against_layers(graph)
    assert not wrong, f"imports against the layers: {wrong}"
    # the core finds the papers by name, in their list (fedclust.papers.PAPERS), which
    # imports nothing
    assert not list(graph.successors("fedclust.papers"))


def test_the_layer_check_finds_a_wrong_way_import():
    graph = import_graph()
    graph.add_edge("fedclust.lloyd", "fedclust.papers.kfed.figures")
    graph.add_edge("fedclust.papers.comparison.figures", "fedclust.papers.comparison.experiments")
    graph.add_edge("fedclust.papers.kfed.claims", "fedclust.papers.kfed.figures")
    graph.add_edge("fedclust.papers.kfed.synthetic", "fedclust.papers.coreset.experiments")
    assert _against_layers(graph) == [
        ("fedclust.lloyd", "fedclust.papers.kfed.figures"),
        ("fedclust.papers.comparison.figures", "fedclust.papers.comparison.experiments"),
        ("fedclust.papers.kfed.claims", "fedclust.papers.kfed.figures"),
        ("fedclust.papers.kfed.synthetic", "fedclust.papers.coreset.experiments")]


def _aliases(path) -> list[str]:
    """The second names ``path`` gives a thing of the library: ``from x import a as b`` (but
    ``as _a``, a private handle where a parameter shadows ``a``), and ``b = a`` or
    ``b, c = a, d`` of bare names at module level."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(
                "fedclust")):
            found += [f"{a.name} as {a.asname}" for a in node.names
                      if a.asname not in (None, a.name, f"_{a.name}")]
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name | ast.Tuple):
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            targets = node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) \
                else node.targets
            if len(values) == len(targets) and all(isinstance(v, ast.Name) for v in values):
                found.append(ast.unparse(node))
    return found


def test_no_thing_of_the_library_has_a_second_name():
    found = {path.relative_to(SRC).as_posix(): names
             for path in sorted((SRC / "fedclust").rglob("*.py")) if (names := _aliases(path))}
    assert not found, f"second names: {found}"


def test_the_alias_check_finds_both_forms(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from ..vocabulary import MIXTURE as M\nfrom .progress import progress "
                      "as _progress\nN = M\nESTIMATORS = (M, N)\n")
    assert _aliases(module) == ["MIXTURE as M", "N = M"]

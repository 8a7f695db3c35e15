"""The shape of the package: modules of at most 700 lines, capability packages that do
not import each other, an import graph of at most six layers without a cycle, and
package docstrings that name every module they hold.

The rooms of the graph are the package's top-level modules and subpackages; an import
anywhere in a file (a function's too) is an arrow from its room to the imported one's.
A package's ``__init__.py`` that only hands names on is its face, not an arrow of its
own: the top-level one imports every capability to register it with spaCy."""

import ast
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "spacy_rhetoric"
MAX_LINES = 700
MAX_LAYERS = 6
CAPABILITIES = ("parallelism", "chiasmus", "figures", "intertext", "treebank")


def modules() -> List[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def imported(path: Path, root: Path = PACKAGE) -> Iterator[Tuple[str, ...]]:
    """The spacy_rhetoric modules a file imports, as dotted parts below the package
    (relative imports resolved against the file's own package)."""
    here = path.relative_to(root).with_suffix("").parts
    package = here[:-1]  # an __init__.py's parts end in "__init__"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                parts = base + tuple(node.module.split(".") if node.module else ())
            elif node.module and node.module.split(".")[0] == "spacy_rhetoric":
                parts = tuple(node.module.split(".")[1:])
            else:
                continue
            if node.module is None:  # from . import a, b
                for alias in node.names:
                    yield parts + (alias.name,)
            else:
                yield parts
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "spacy_rhetoric":
                    yield tuple(names[1:])


def room(parts: Tuple[str, ...]) -> str:
    """A module's room: its top-level module or subpackage ("" for the package face)."""
    return parts[0] if parts and parts[0] != "__init__" else ""


@lru_cache(maxsize=1)
def arrows() -> Dict[str, Set[str]]:
    graph: Dict[str, Set[str]] = {}
    for path in modules():
        source = room(path.relative_to(PACKAGE).with_suffix("").parts)
        if not source:
            continue  # the package's face
        graph.setdefault(source, set())
        for parts in imported(path):
            target = room(parts)
            if target and target != source:
                graph[source].add(target)
    return graph


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_at_most_700_lines(path):
    n_lines = len(path.read_text(encoding="utf8").splitlines())
    assert n_lines <= MAX_LINES, f"{path.relative_to(PACKAGE)}: {n_lines} lines"


def crossings(graph: Dict[str, Set[str]]) -> Set[Tuple[str, str]]:
    return {
        (source, target)
        for source, targets in graph.items()
        if source in CAPABILITIES
        for target in targets
        if target in CAPABILITIES
    }


def test_capability_packages_do_not_import_each_other():
    assert not crossings(arrows())


def test_import_graph_has_no_cycle_and_at_most_six_layers():
    graph = arrows()
    layer: Dict[str, int] = {}
    visiting: List[str] = []

    def depth(name: str) -> int:
        if name in visiting:
            cycle = visiting[visiting.index(name) :] + [name]
            raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
        if name not in layer:
            visiting.append(name)
            layer[name] = 1 + max((depth(t) for t in graph.get(name, ())), default=0)
            visiting.pop()
        return layer[name]

    deepest = max(graph, key=depth)
    assert layer[deepest] <= MAX_LAYERS, f"{layer[deepest]} layers, from {deepest}"
    # the ground floor holds what the capabilities share; the command line is on top
    assert layer["cli"] > layer["analysis"] > max(layer[c] for c in CAPABILITIES)
    assert layer["stems"] == layer["names"] == layer["displacy_spans"] == 1


def test_the_checks_see_a_crossing_import(tmp_path):
    """The reader resolves relative, absolute and function-level imports to rooms, so a
    capability importing another's would be seen."""
    module = tmp_path / "figures" / "rules.py"
    module.parent.mkdir()
    module.write_text(
        "from ..chiasmus.stems import pairs\n"
        "from . import words\n"
        "from .candidates import Candidate\n"
        "def f():\n"
        "    import spacy_rhetoric.intertext.units\n",
        encoding="utf8",
    )
    found = [room(parts) for parts in imported(module, tmp_path)]
    assert found == ["chiasmus", "figures", "figures", "intertext"]
    graph = {"figures": {"chiasmus", "stems"}, "analysis": {"figures"}}
    assert crossings(graph) == {("figures", "chiasmus")}


@pytest.mark.parametrize(
    "package", sorted(p.parent for p in PACKAGE.glob("*/__init__.py")), ids=lambda p: p.name
)
def test_package_docstring_names_its_modules(package):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf8")))
    assert doc, f"{package.name} has no docstring"
    missing = [
        path.stem
        for path in sorted(package.glob("*.py"))
        if path.stem != "__init__" and f"``{path.stem}``" not in doc
    ]
    assert not missing, f"{package.name}/__init__.py does not say what these hold: {missing}"

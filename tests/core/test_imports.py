"""The package's import graph has no cycles, between modules or between its subpackages.

Every import counts: module level, inside functions (a deferred import hides a cycle from the
interpreter, not from the reader) and under ``TYPE_CHECKING``. The graph is read with ``ast``,
so nothing is imported and the test costs milliseconds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import pytest_infx

PACKAGE = Path(pytest_infx.__file__).parent
NAME = "pytest_infx"

Graph = Mapping[str, frozenset[str]]


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [NAME, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterable[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        base = module.split(".")
        if path.name != "__init__.py":
            base.pop()
        base = base[: len(base) - node.level + 1]
        prefix = ".".join([*base, node.module] if node.module else base)
    else:
        prefix = node.module or ""
    yield prefix
    yield from (f"{prefix}.{alias.name}" for alias in node.names)


def module_graph(root: Path) -> dict[str, frozenset[str]]:
    """Module -> the package modules it imports; ``from a import b`` counts as ``a.b`` when ``b``
    is a module, else as ``a``."""
    modules = _modules(root)
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_bytes(), filename=str(path))
        imported = {
            target
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for target in _targets(module, path, node)
            if target in modules and target != module
        }
        graph[module] = frozenset(imported)
    return graph


def subpackage_graph(graph: Graph) -> dict[str, frozenset[str]]:
    """The same edges between the package's top-level parts (``engines``, ``speedbench``, ...)."""

    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])

    merged: dict[str, set[str]] = {}
    for source, targets in graph.items():
        merged.setdefault(part(source), set()).update(
            part(t) for t in targets if part(t) != part(source)
        )
    return {node: frozenset(targets) for node, targets in merged.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """One shortest cycle through each strongly connected component, as a closed chain."""
    found: list[list[str]] = []
    seen: set[str] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        chain = _shortest_cycle(graph, start)
        if chain is not None:
            found.append(chain)
            seen.update(chain)
    return found


def _shortest_cycle(graph: Graph, start: str) -> list[str] | None:
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, ())):
                if target == start:
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(parents[chain[-1]])
                    return [*reversed(chain), start]
                if target not in parents:
                    parents[target] = node
                    following.append(target)
        frontier = following
    return None


def _render(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(chain) for chain in found)


@pytest.fixture(scope="module")
def graph() -> dict[str, frozenset[str]]:
    return module_graph(PACKAGE)


def test_no_import_cycle_between_modules(graph: Graph) -> None:
    found = cycles(graph)
    assert not found, "import cycles:\n" + _render(found)


def test_no_import_cycle_between_subpackages(graph: Graph) -> None:
    found = cycles(subpackage_graph(graph))
    assert not found, "import cycles between subpackages:\n" + _render(found)


def test_the_cycle_finder_sees_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    root = tmp_path / NAME
    (root / "a").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a" / "__init__.py").write_text("")
    (root / "a" / "x.py").write_text("def f():\n    from pytest_infx.b import y\n")
    (root / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n"
    )
    graph = module_graph(root)
    assert graph[f"{NAME}.a.x"] == {f"{NAME}.b"}
    assert graph[f"{NAME}.b"] == {f"{NAME}.a.x", f"{NAME}.a"}
    assert _render(cycles(graph)) == f"{NAME}.a.x -> {NAME}.b -> {NAME}.a.x"
    assert cycles(subpackage_graph(graph)) == [[f"{NAME}.a", f"{NAME}.b", f"{NAME}.a"]]


PYTEST_SIDE = ("pytest", "_pytest", "xdist", "pluggy", "syrupy", "execnet")
"""pytest and the libraries that exist only inside a pytest run."""
MAY_IMPORT_PYTEST = (f"{NAME}.plugin", f"{NAME}.compat", f"{NAME}.golden.extension")
"""The pytest package, the wall around the internals of pytest, xdist and syrupy, and the golden
curves' syrupy extension, which syrupy loads by name."""


def pytest_importers(root: Path) -> dict[str, list[str]]:
    """Module -> the pytest-side libraries it imports, at any depth of its code."""
    found: dict[str, list[str]] = {}
    for module, path in _modules(root).items():
        tree = ast.parse(path.read_bytes(), filename=str(path))
        names = sorted(
            {
                target.split(".")[0]
                for node in ast.walk(tree)
                if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0)
                for target in _targets(module, path, node)
                if target.split(".")[0] in PYTEST_SIDE
            }
        )
        if names:
            found[module] = names
    return found


def _outside_pytest_side(found: Mapping[str, list[str]]) -> dict[str, list[str]]:
    return {
        module: names
        for module, names in found.items()
        if not any(
            module == allowed or module.startswith(f"{allowed}.") for allowed in MAY_IMPORT_PYTEST
        )
    }


def test_only_the_pytest_package_and_the_golden_extension_import_pytest() -> None:
    strays = _outside_pytest_side(pytest_importers(PACKAGE))
    assert not strays, "move these into pytest_infx/plugin or pass values to them: " + repr(strays)


def test_the_pytest_import_finder_sees_deferred_imports(tmp_path: Path) -> None:
    root = tmp_path / NAME
    (root / "plugin").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "plugin" / "__init__.py").write_text("import pytest\n")
    (root / "speed.py").write_text("def f():\n    from xdist.scheduler import LoadScheduling\n")
    (root / "plain.py").write_text("import json\n")
    found = pytest_importers(root)
    assert found == {f"{NAME}.plugin": ["pytest"], f"{NAME}.speed": ["xdist"]}
    assert _outside_pytest_side(found) == {f"{NAME}.speed": ["xdist"]}

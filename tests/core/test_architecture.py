"""The architecture page's picture (docs/architecture.md) is the import graph: every room (package
or top-level module) is drawn, every import points down the page, and the counts it states are the
graph's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from core.test_imports import NAME, PACKAGE, module_graph, subpackage_graph

PAGE = PACKAGE.parent / "docs" / "architecture.md"


def _rooms_graph() -> dict[str, frozenset[str]]:
    graph = subpackage_graph(module_graph(PACKAGE))
    short = {room: room.removeprefix(f"{NAME}.") for room in graph if room != NAME}
    return {
        short[room]: frozenset(short[t] for t in targets if t != NAME)
        for room, targets in graph.items()
        if room != NAME
    }


def drawn_layers(page: str) -> dict[str, int]:
    """Room -> its line in the picture, the page's first code block (0 at the top): what a line
    says before its first gap of three spaces are its rooms, a package written with its slash."""
    block = page.split("```", 2)[1]
    layers: dict[str, int] = {}
    line_no = 0
    for line in block.splitlines():
        if not line or line[0] in " |":
            continue
        for token in re.split(r"\s{3,}", line, maxsplit=1)[0].split():
            layers[token.rstrip("/")] = line_no
        line_no += 1
    return layers


def test_every_room_is_drawn_and_every_import_points_down_the_page() -> None:
    layers = drawn_layers(PAGE.read_text(encoding="utf-8"))
    graph = _rooms_graph()
    assert sorted(set(graph) - set(layers)) == [], "rooms missing from the picture"
    assert sorted(set(layers) - set(graph)) == [], "the picture draws rooms that do not exist"
    upward = sorted(
        f"{room} (line {layers[room]}) -> {target} (line {layers[target]})"
        for room, targets in graph.items()
        for target in targets
        if layers[target] <= layers[room]
    )
    assert upward == [], "imports that do not point down the picture"


def test_the_stated_counts_are_the_graphs() -> None:
    page = PAGE.read_text(encoding="utf-8")
    found = re.search(r"(\d+) rooms \(packages and top-level modules\), (\d+) arrows", page)
    assert found is not None, f"{PAGE.name} states no room and arrow counts"
    graph = _rooms_graph()
    arrows = sum(len(targets) for targets in graph.values())
    assert (int(found[1]), int(found[2])) == (len(graph), arrows)


def test_the_picture_reader_reads_rooms_and_skips_continuations(tmp_path: Path) -> None:
    page = "# Architecture\n```\na/ b   text c/\n  |   more\nd e/    leaves f\n```\n"
    assert drawn_layers(page) == {"a": 0, "b": 0, "d": 1, "e": 1}


def test_no_module_of_the_pytest_side_is_over_400_lines() -> None:
    """``plugin/`` holds the hooks and hands over to its parts; a module that grows past this
    is doing two things."""
    long = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in sorted((PACKAGE / "plugin").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}


def public_classes(package: Path) -> dict[str, list[str]]:
    """Public class name -> the modules that define it at their top level, so that a reader
    who meets a name knows which thing it is."""
    defined: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined.setdefault(node.name, []).append(path.relative_to(package).as_posix())
    return defined


def test_each_public_class_name_is_defined_once() -> None:
    twice = {name: where for name, where in public_classes(PACKAGE).items() if len(where) > 1}
    assert twice == {}


def test_the_class_reader_finds_a_name_defined_in_two_modules(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("class Verdict:\n    pass\nclass _Hidden:\n    pass\n")
    nested = "def f():\n    class Verdict:\n        pass\n"
    (tmp_path / "b.py").write_text(nested + "class Verdict:\n    pass\n")
    assert public_classes(tmp_path) == {"Verdict": ["a.py", "b.py"]}

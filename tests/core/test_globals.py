"""Values flow one way: no module keeps a container at module level that code then changes, the
kind of registry that makes one run's state leak into the next (pytester runs pytest many times
in one process). A module that must keep one is named in ``KNOWN`` with why, so the list can
only shrink; it is empty: the engine providers of a pytest run are an ``EngineRegistry`` value
built once from the run's hooks and passed down."""

from __future__ import annotations

import ast
from pathlib import Path

from core.test_imports import NAME, PACKAGE, _modules

MUTATORS = {
    "append", "add", "update", "clear", "pop", "popitem", "remove", "setdefault", "extend",
    "insert", "discard",
}  # fmt: skip
KNOWN: dict[str, str] = {}


def _mutable(value: ast.expr | None) -> bool:
    containers = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
    if isinstance(value, containers):
        return True
    names = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque"}
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and (value.func.id in names)
    )


def mutated_globals(root: Path) -> set[str]:
    """``module.name`` of each module-level container some code of its module changes."""
    found = set()
    for module, path in _modules(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and _mutable(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
        for inner in ast.walk(tree):
            target: ast.expr | None = None
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
                if inner.func.attr in MUTATORS:
                    target = inner.func.value
            elif isinstance(inner, ast.Subscript) and isinstance(inner.ctx, ast.Store | ast.Del):
                target = inner.value
            elif isinstance(inner, ast.AugAssign):
                target = inner.target
            if isinstance(target, ast.Name) and target.id in names:
                found.add(f"{module}.{target.id}")
    return found


def test_no_module_level_container_is_changed_but_the_known_ones() -> None:
    assert sorted(mutated_globals(PACKAGE)) == sorted(KNOWN)


def test_the_finder_sees_appends_item_stores_and_augmented_assignments(tmp_path: Path) -> None:
    root = tmp_path / NAME
    root.mkdir()
    (root / "a.py").write_text("_seen = []\nCONST = {}\ndef f():\n    _seen.append(1)\n")
    (root / "b.py").write_text("_by = {}\ndef g(k):\n    _by[k] = 1\n")
    (root / "c.py").write_text("_n = [0]\n_t = ()\ndef h():\n    _n[0] += 1\n")
    assert mutated_globals(root) == {f"{NAME}.a._seen", f"{NAME}.b._by", f"{NAME}.c._n"}

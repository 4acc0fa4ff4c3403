"""The run's values are the session's typed attributes, found from a config with one accessor;
only what belongs to one item is kept in pytest's stash, on the item."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_infx
import pytest_infx.plugin.stash as stash
from pytest_infx.plugin.state import NAME, NotOptedInError, RunState

PACKAGE = Path(pytest_infx.__file__).parent
STASH_MODULE = PACKAGE / "plugin" / "stash.py"


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_bytes(), filename=str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def _names_stash_key(node: ast.AST) -> bool:
    """``pytest.StashKey()``, ``StashKey[T]()``: a call whose callee spells the name."""
    return isinstance(node, ast.Call) and "StashKey" in ast.unparse(node.func)


def _config_name(node: ast.expr) -> bool:
    """``config``, ``early_config``, ``pytestconfig``, ``self.config``, ``session.config``..."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return isinstance(name, str) and name.endswith("config")


def stash_keys_outside_the_stash_module() -> list[str]:
    return [
        f"{where}:{node.lineno}"
        for where, tree in _modules()
        if where != "plugin/stash.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _names_stash_key(node)
    ]


def config_stash_uses() -> list[str]:
    """Every ``<something>config.stash`` in the package: a value of the whole run kept on the
    config instead of on the session."""
    return [
        f"{where}:{node.lineno}: {ast.unparse(node)}"
        for where, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "stash" and _config_name(node.value)
    ]


def stash_module_keys() -> dict[str, str]:
    """Each key the stash module defines -> the docstring under it."""
    body = ast.parse(STASH_MODULE.read_bytes()).body
    return {
        node.target.id: _docstring(after)
        for node, after in zip(body, [*body[1:], ast.Pass()], strict=True)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.value is not None
        and _names_stash_key(node.value)
    }


def _docstring(node: ast.stmt) -> str:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return str(node.value.value)
    return ""


def test_every_stash_key_is_a_per_item_key_listed_in_item_keys() -> None:
    """A new key is a value of one item, says so, and is listed: a value of the whole run is an
    attribute of :class:`RunState` instead."""
    keys = stash_module_keys()
    assert sorted(keys) == ["NO_SERVER", "PREFLIGHT", "REF", "REUSE"]
    assert {name: doc for name, doc in keys.items() if not doc.startswith("item: ")} == {}
    listed = [id(key) for key in stash.ITEM_KEYS]
    assert sorted(listed) == sorted(id(getattr(stash, name)) for name in keys)


def test_no_stash_key_is_made_outside_the_stash_module() -> None:
    assert stash_keys_outside_the_stash_module() == []


def test_nothing_is_kept_on_the_config_stash() -> None:
    assert config_stash_uses() == []


def test_the_scans_see_a_config_stash_and_a_stash_key() -> None:
    tree = ast.parse(
        "KEY = pytest.StashKey[int]()\n"
        "def f(config, item):\n"
        "    config.stash[KEY] = 1\n"
        "    item.config.stash.get(KEY)\n"
        "    item.stash[KEY] = 2\n"
    )
    calls = [node for node in ast.walk(tree) if _names_stash_key(node)]
    configs = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "stash" and _config_name(node.value)
    ]
    assert len(calls) == 1
    assert [ast.unparse(node) for node in configs] == ["config.stash", "item.config.stash"]


def test_an_opted_in_config_has_its_session(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    state = RunState.of(config)
    assert state is config.pluginmanager.get_plugin(NAME)
    assert state.config is config
    assert state.folders is not None and state.folders.run.is_dir()
    assert not state.worker


def test_asking_a_run_that_did_not_opt_in_is_a_clear_error(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    with pytest.raises(NotOptedInError, match="did not opt in"):
        RunState.of(config)


def test_reasons_and_notes_are_replaced_whole(pytester: pytest.Pytester) -> None:
    state = RunState(pytester.parseconfig())
    before = state.reasons
    state.add_reasons(["one"])
    state.add_reasons(iter(["two"]))
    state.add_notes(["note"])
    assert before == () and state.reasons == ("one", "two") and state.notes == ("note",)


def test_sessions_are_hashable_by_identity(pytester: pytest.Pytester) -> None:
    """pytest's plugin manager keys its plugins by the object."""
    config = pytester.parseconfig()
    assert len({RunState(config), RunState(config)}) == 2

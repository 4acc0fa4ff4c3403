"""One session object answers pytest's hooks, registered only where the repository opted in;
the plugin module itself keeps only the hooks that run before that is known."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import pytest_infx.plugin as plugin
from pytest_infx.plugin.hooks import InfxSession
from pytest_infx.plugin.state import NAME

BOOTSTRAP = ("pytest_addhooks", "pytest_addoption", "pytest_load_initial_conftests")
"""The plugin module's own hooks: the options and hookspecs, declared in every run, and the
opt-in, decided before the initial conftests load."""
XDIST_HOOKS = ("pytest_configure_node", "pytest_testnodedown")


def module_level_hooks(source: str) -> list[str]:
    return sorted(
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("pytest_")
    )


def test_the_plugin_module_keeps_only_the_bootstrap_hooks() -> None:
    assert module_level_hooks(Path(inspect.getfile(plugin)).read_text()) == sorted(BOOTSTRAP)


def test_the_hook_reader_sees_a_module_level_hook() -> None:
    source = "def pytest_configure(config):\n    pass\ndef helper():\n    pass\n"
    assert module_level_hooks(source) == ["pytest_configure"]


def _session_hooks() -> list[str]:
    return sorted(name for name in vars(InfxSession) if name.startswith("pytest_"))


def test_every_session_method_named_as_a_hook_is_one_of_pytests(
    pytester: pytest.Pytester,
) -> None:
    """A misspelt hook would never be called; pluggy says nothing of a method it does not know
    only where the hook is optional (xdist's)."""
    pytester.makeini("[pytest]\ninfx = true\n")
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    session = config.pluginmanager.get_plugin(NAME)
    assert isinstance(session, InfxSession)
    hooks = config.pluginmanager.hook
    known = {name for name in _session_hooks() if hasattr(hooks, name)}
    unknown = set(_session_hooks()) - known
    assert unknown <= set(XDIST_HOOKS)
    called = {
        name
        for name in known
        if any(impl.plugin is session for impl in getattr(hooks, name).get_hookimpls())
    }
    assert called == known


def test_a_run_that_did_not_opt_in_has_no_session_and_none_of_its_hooks(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    assert config.pluginmanager.get_plugin(NAME) is None
    ours = {
        name
        for name in (*_session_hooks(), *BOOTSTRAP)
        if hasattr(config.pluginmanager.hook, name)
        for impl in getattr(config.pluginmanager.hook, name).get_hookimpls()
        if getattr(impl.plugin, "__name__", "").startswith("pytest_infx")
        or isinstance(impl.plugin, InfxSession)
    }
    assert ours == set(BOOTSTRAP)


def test_an_opted_in_run_registers_one_session(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    sessions = [p for p in config.pluginmanager.get_plugins() if isinstance(p, InfxSession)]
    assert sessions == [config.pluginmanager.get_plugin(NAME)]

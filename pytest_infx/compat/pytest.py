"""pytest's internals that pytest-infx touches (see :mod:`pytest_infx.compat.versions`)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import TerminalRepr
from _pytest.config.findpaths import determine_setup
from _pytest.mark.expression import Expression

__all__ = [
    "TerminalRepr",
    "append_to_node_id",
    "fixture_manager",
    "marker_matcher",
    "setup_from_paths",
]


def marker_matcher(markexpr: str) -> Callable[[Collection[str]], bool] | None:
    """Whether an item with the given marker names is selected by ``-m markexpr``, decided as
    pytest decides it; ``None`` for an expression pytest cannot parse (pytest reports it)."""
    try:
        expression = Expression.compile(markexpr)
    except Exception:  # pytest 9 raises its ParseError or SyntaxError, depending on the release
        return None

    def matches(names: Collection[str]) -> bool:
        return expression.evaluate(lambda name, /, **kwargs: name in names)

    return matches


def fixture_manager(session: pytest.Session) -> Any:
    """pytest's fixture manager, which computes an item's fixture closure: recipe items are
    functions made at collection, and their closure is computed once per kind of item."""
    return session._fixturemanager


def setup_from_paths(config: pytest.Config) -> tuple[Path, Path | None]:
    """The rootdir and ini file pytest picks from the test paths of this command line as it
    reads them now, with every plugin's options known. pytest picks them before any plugin is
    loaded, when the value of a plugin's option in its space-separated form is still taken for
    a test path; comparing the two tells that this happened."""
    paths = config.args if config.args_source is pytest.Config.ArgsSource.ARGS else []
    rootpath, inipath, _, _ = determine_setup(
        inifile=config.option.inifilename,
        override_ini=config.option.override_ini,
        args=paths,
        rootdir_cmd_arg=config.option.rootdir or None,
        invocation_dir=config.invocation_params.dir,
    )
    return rootpath, inipath


def append_to_node_id(item: pytest.Item, suffix: str) -> None:
    """Ends the item's node id with ``suffix``, as pytest-xdist's ``--dist loadgroup`` does on a
    worker with ``@group``. xdist 3.8 assigns ``_nodeid``, the id up to pytest 9.1; pytest 9.2
    keeps the id in a structured ``_id`` and ignores that assignment. Nothing to do where the id
    already ends with the suffix."""
    if item.nodeid.endswith(suffix):
        return
    node: Any = item
    if hasattr(node, "_id"):
        node._id = type(node._id).parse(item.nodeid + suffix)
    else:
        node._nodeid = item.nodeid + suffix

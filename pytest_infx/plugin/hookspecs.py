"""Hooks pytest-infx offers to other plugins and to conftest files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_infx.lint.findings import Rule


@pytest.hookspec
def pytest_infx_register_engines() -> Iterable[object] | None:
    """Engine adapters to add: instances, or classes that take no arguments, each with a
    ``name`` (the recipe's ``engine.name``), ``plan()`` and ``rendered_prompt()`` as in
    :class:`pytest_infx.engines.base.EngineAdapter`. An engine name that pytest-infx or another
    provider already has is a usage error.
    """


@pytest.hookspec
def pytest_infx_lint_rules() -> Iterable[Rule] | None:
    """Lint rules to add to the built-in ones (:class:`pytest_infx.lint.Rule`: an ``id``, a
    ``description`` and a ``check`` from the lint context to findings). They run as
    ``infx-lint::<id>`` items, and ``infx_lint_select`` / ``infx_lint_ignore`` name them by id
    or family. Something that is not a rule, or an id that a built-in rule or another provider
    already has, is a usage error.
    """


@pytest.hookspec
def pytest_infx_kinds() -> Iterable[object] | None:
    """Kinds of benchmark to add to the built-in ones: objects that answer what
    :data:`pytest_infx.plugin.kinds.FACES` lists (their recipe block's points and material,
    their records' path, history row, figures and table, and how a point is measured against
    its server). A recipe holds a kind's block under ``kinds.<name>``; its points are items
    marked ``<name>`` that run ``recipe_point``, and write
    :class:`pytest_infx.results.records.KindRecord` records. Something that is not a kind, or a
    name another kind has, is a usage error.
    """


@pytest.hookspec
def pytest_infx_result(config: pytest.Config, path: Path, record: Mapping[str, Any]) -> None:
    """A SPEED-Bench cell's or AgentX point's result file has just been written, whole (the
    write is atomic), at ``path``; ``record`` is what the file holds, as plain JSON values of
    one's own to keep. Called on the process that measured the item (an xdist worker under
    ``-n``), for a failed item too, before the item's gate decides its outcome; not for an item
    whose stored result ``--infx-resume`` reused, since no file is written for it.
    """

"""Hooks pytest-infx offers to other plugins and to conftest files."""

from __future__ import annotations

from collections.abc import Iterable

import pytest


@pytest.hookspec
def pytest_infx_register_engines() -> Iterable[object] | None:
    """Engine adapters to add: instances, or classes that take no arguments, each with a
    ``name`` (the recipe's ``engine.name``), ``plan()`` and ``rendered_prompt()`` as in
    :class:`pytest_infx.engines.base.EngineAdapter`. An engine name that pytest-infx or another
    provider already has is a usage error.
    """

"""pytest's internals that pytest-infx touches (see :mod:`pytest_infx.compat.versions`)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import pytest
from _pytest._code.code import TerminalRepr
from _pytest.mark.expression import Expression

__all__ = ["TerminalRepr", "fixture_manager", "marker_matcher"]


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

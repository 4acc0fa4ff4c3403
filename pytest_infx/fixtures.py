"""Fixtures that give recipe items their point, server and results sink."""

from __future__ import annotations

import pytest

from pytest_infx import collect
from pytest_infx.recipes.points import Point


@pytest.fixture
def infx_point(request: pytest.FixtureRequest) -> Point:
    """The benchmark point of the current recipe item."""
    point = collect.point_of(request.node)
    if point is None:
        raise pytest.UsageError(f"{request.node.nodeid} is not a pytest-infx recipe item")
    return point

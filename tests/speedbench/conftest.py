from __future__ import annotations

from collections.abc import Iterator

import pytest

from .standin import StandinServer


@pytest.fixture
def standin() -> Iterator[StandinServer]:
    with StandinServer() as server:
        yield server

"""What the pytest side does differently for each kind of point, as one protocol.

A SPEED-Bench cell and an AgentX point differ in the item function they run, what they measure
against their server, what stands in for them when ``--infx-resume`` reuses their stored result,
the properties their record leaves for the end-of-run summary, and which stored file resume
judges and the digest of the data it must have been measured on.
SPEED-Bench answers them in its own module and every other kind through the generic one
(:mod:`~pytest_infx.plugin.run.kinds.measured`), so no other module asks which kind it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from pytest_infx.plugin.collect.items import Runnable

if TYPE_CHECKING:
    import pytest

    from pytest_infx.launch import ServerHandle
    from pytest_infx.plugin.run.session import Run
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.records import Record
    from pytest_infx.results.reuse import Reuse


class ItemKind(Protocol):
    """One kind of recipe point, as the plugin runs and resumes it."""

    @property
    def name(self) -> str:
        """The point's ``kind``, which is also the marker its items carry."""
        ...

    @property
    def function(self) -> Callable[..., None]:
        """The test function of its items; the fixture it asks for is the kind's runnable."""
        ...

    def fresh(
        self, point: Point, server: ServerHandle, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        """The runnable that measures ``point`` against ``server``."""
        ...

    def reused(
        self, point: Point, reuse: Reuse, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        """The runnable that stands for ``point`` with its stored result: no server."""
        ...

    def attach(self, node: pytest.Item, point: Point, record: Record) -> None:
        """Put the point's record on its item for junit and the end-of-run summary; a fresh
        and a reused runnable leave the same properties."""
        ...

    def data_sha256(self, point: Point, datasets: Datasets) -> str | None:
        """The digest of the data the point would use now, which its stored result must have."""
        ...

"""What the pytest side does differently for each kind of point, as one protocol.

A SPEED-Bench cell and an AgentX point differ in the item function they run, what they measure
against their server, what stands in for them when ``--infx-resume`` reuses their stored result,
the properties their record leaves for the end-of-run summary, and which stored file resume
judges and the digest of the data it must have been measured on.
Each kind answers all of these in its own module, so no other module asks which kind it holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pytest_infx.plugin.collect.items as items
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


@dataclass(frozen=True)
class ReusedRecord:
    """Stands in for a point whose stored result is reused and whose kind needs nothing but
    that record (AgentX, fixed-seq-len): ``attach`` puts it on the item, as a measured point's
    would be, for junit and the end-of-run table."""

    reuse: Reuse
    request: pytest.FixtureRequest
    attach: Callable[[pytest.Item, Record], None]

    def run(self) -> None:
        self.attach(self.request.node, self.reuse.record)


class StandsInWithRecord(ABC):
    """The part of an :class:`ItemKind` for a kind whose reused point needs nothing but its
    stored record (AgentX, fixed-seq-len): the stand-in and the item's properties both come
    from :meth:`attach_record`, so a reused point leaves what a measured one leaves."""

    @abstractmethod
    def attach_record(self, node: pytest.Item, record: Record) -> None:
        """Put the record on its item for junit and the end-of-run summary."""

    @property
    def function(self) -> Callable[..., None]:
        """The generic item function: a kind whose items ask for no golden snapshot needs no
        other."""
        return items.recipe_point

    def reused(
        self, point: Point, reuse: Reuse, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        return ReusedRecord(reuse, request, self.attach_record)

    def attach(self, node: pytest.Item, point: Point, record: Record) -> None:
        self.attach_record(node, record)

"""The pytest side of every kind that measures its points through
:class:`~pytest_infx.results.measure.Measures` (AgentX, fixed-seq-len, and each kind another
package provides): the kind returns a point's record, and this adapter keeps it, puts it on the
item, fails the item on the record's own verdict and hands it to the baseline gate, or stands in
for it with its stored record when ``--infx-resume`` reuses it.

The kind is loaded on first use, so that collecting its items imports none of what measuring
needs.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.collect.items as items
from pytest_infx.results.measure import Measurement, PointFailed

if TYPE_CHECKING:
    from pytest_infx.launch import ServerHandle
    from pytest_infx.plugin.collect.items import Runnable
    from pytest_infx.plugin.run.session import Run
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.identity import ConfigIdentity
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.measure import Measures
    from pytest_infx.results.records import Record
    from pytest_infx.results.reuse import Reuse


@dataclass(frozen=True)
class RunContext:
    """The run as a kind that measures a point sees it
    (:class:`~pytest_infx.results.measure.MeasureContext`)."""

    run: Run

    @property
    def layout(self) -> Layout:
        return self.run.layout

    @property
    def default_repeats(self) -> int:
        return self.run.settings.history.repeats

    def identity(self, point: Point) -> ConfigIdentity:
        return self.run.identity(point)

    def model_dir(self, point: Point) -> str:
        return self.run.model_dir(point)

    def measuring(self, server: ServerHandle, point: Point) -> AbstractContextManager[None]:
        return self.run.measuring(server, point)

    def counting(self, point: Point, requests: int) -> AbstractContextManager[None]:
        return self.run.progress.doing("cell", point.id, total=requests)

    def request_done(self, tokens: int | None, *, ok: bool) -> None:
        self.run.progress.request_done(tokens, ok=ok)

    def running(self, point: Point, duration_s: float, log: str) -> AbstractContextManager[None]:
        return self.run.progress.doing("point", point.id, duration_s=duration_s, log=log)

    def say(self, message: str) -> None:
        self.run.say(message)


@dataclass
class MeasuredPoint:
    kind: Measured
    point: Point
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest

    def run(self) -> None:
        __tracebackhide__ = True
        point, run = self.point, self.run_ctx
        try:
            found = self.kind.measures().measure(point, self.server, RunContext(run))
        except PointFailed as exc:
            pytest.fail(str(exc), pytrace=False)
        measured = found if isinstance(found, Measurement) else Measurement(found)
        record = run.keep(measured.record, point, problems=measured.problems)
        self.kind.attach_record(self.request.node, record)
        failure = measured.failure
        if failure is None and (not record.passed or measured.problems):
            failure = "; ".join(record.reasons if not record.passed else measured.problems)
        if failure is not None:
            pytest.fail(f"{point.id}: {failure}", pytrace=False)
        run.gate(self.request.node, record, point)


@dataclass(frozen=True)
class ReusedRecord:
    """Stands in for a point whose stored result is reused: ``attach`` puts its record on the
    item, as a measured point's would be, for junit and the end-of-run table."""

    reuse: Reuse
    request: pytest.FixtureRequest
    attach: Callable[[pytest.Item, Record], None]

    def run(self) -> None:
        self.attach(self.request.node, self.reuse.record)


@dataclass(frozen=True)
class Measured:
    """A kind measured through its :class:`~pytest_infx.results.measure.Measures`, which
    ``load`` gives on first use; its record goes on the item under ``record_property``, where
    the end-of-run table finds it. A reused point needs nothing but its stored record, so the
    stand-in and a measured point leave the same properties (:meth:`attach_record`)."""

    name: str
    load: Callable[[], Measures]
    record_property: str

    def measures(self) -> Measures:
        return self.load()

    def attach_record(self, node: pytest.Item, record: Record) -> None:
        node.user_properties.extend(self.measures().properties(record))
        node.user_properties.append((self.record_property, record.as_json()))

    @property
    def function(self) -> Callable[..., None]:
        """The generic item function: a kind whose items ask for no golden snapshot needs no
        other."""
        return items.recipe_point

    def fresh(
        self, point: Point, server: ServerHandle, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        return MeasuredPoint(self, point, server, run, request)

    def reused(
        self, point: Point, reuse: Reuse, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        return ReusedRecord(reuse, request, self.attach_record)

    def attach(self, node: pytest.Item, point: Point, record: Record) -> None:
        self.attach_record(node, record)

    def data_sha256(self, point: Point, datasets: Datasets) -> str | None:
        return self.measures().data_sha256(point)

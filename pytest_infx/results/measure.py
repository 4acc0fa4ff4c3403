"""How a kind measures one of its points, as the one generic pytest adapter asks it
(:mod:`pytest_infx.plugin.run.kinds.measured`): the kind gets the point, its live server and
the run's :class:`MeasureContext`, and returns the point's record, which the adapter keeps,
puts on the item, fails on and hands to the baseline gate.

A kind that measures this way needs neither pytest nor the session: it is plain code over
values, like the rest of its package. Fixed-seq-len is measured so, and so is every kind that
another package provides.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_infx.launch import ServerHandle
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.identity import ConfigIdentity
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.records import Record


class PointFailed(Exception):
    """The point cannot be measured (its prompts cannot be made, say); the message says why,
    and the point fails with it before any record is written."""


class MeasureContext(Protocol):
    """What the run gives a kind that measures a point."""

    @property
    def layout(self) -> Layout:
        """The results folder, for the files a kind writes beside its record."""
        ...

    @property
    def default_repeats(self) -> int:
        """How many times to measure a point whose block does not say (``infx_repeats``)."""
        ...

    def identity(self, point: Point) -> ConfigIdentity:
        """The point's config identity, made once per point."""
        ...

    def model_dir(self, point: Point) -> str:
        """The served checkpoint's folder (its tokenizer)."""
        ...

    def measuring(self, server: ServerHandle, point: Point) -> AbstractContextManager[None]:
        """Hold the server while the point is measured: items of one server measure one at a
        time."""
        ...

    def counting(self, point: Point, requests: int) -> AbstractContextManager[None]:
        """Show the progress of the point's ``requests`` (see :meth:`request_done`)."""
        ...

    def request_done(self, tokens: int | None, *, ok: bool) -> None:
        """One request of the point finished, with its output tokens."""
        ...

    def running(self, point: Point, duration_s: float, log: str) -> AbstractContextManager[None]:
        """Show a run of ``duration_s`` seconds whose own output goes to ``log``."""
        ...

    def say(self, message: str) -> None:
        """A line for the terminal, between the progress lines."""
        ...


@dataclass(frozen=True)
class Measurement:
    """A measured point's record with what fails it beyond its own verdict: ``problems`` (its
    result files unreadable, a tool's exit code) fail it in the history row too, and
    ``failure`` is the item's message where the record's reasons do not say it."""

    record: Record
    problems: tuple[str, ...] = ()
    failure: str | None = None


class Measures(Protocol):
    """A kind whose points the generic adapter measures."""

    @property
    def name(self) -> str: ...

    def measure(
        self, point: Point, server: ServerHandle, context: MeasureContext
    ) -> Record | Measurement:
        """Measure the point against its server and return its record (its verdict and
        reasons say whether it passed its own checks), or a :class:`Measurement` where more
        fails it; :class:`PointFailed` when it cannot be measured."""
        ...

    def properties(self, record: Record) -> list[tuple[str, object]]:
        """The item's junit properties of one of its records: a measured and a reused point
        leave the same."""
        ...

    def data_sha256(self, point: Point) -> str | None:
        """The digest of the data the point would be measured on now, which its stored
        result must have; None where the fingerprint covers it."""
        ...

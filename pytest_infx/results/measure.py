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

    def measuring(
        self, server: ServerHandle, point: Point, requests: int
    ) -> AbstractContextManager[None]:
        """Hold the server while the point's ``requests`` are sent (items of one server
        measure one at a time), and show their progress."""
        ...

    def request_done(self, tokens: int | None, *, ok: bool) -> None:
        """One request of the point finished, with its output tokens."""
        ...


class Measures(Protocol):
    """A kind whose points the generic adapter measures."""

    @property
    def name(self) -> str: ...

    def measure(self, point: Point, server: ServerHandle, context: MeasureContext) -> Record:
        """Measure the point against its server and return its record (its verdict and
        reasons say whether it passed its own checks); :class:`PointFailed` when it cannot
        be measured."""
        ...

    def properties(self, record: Record) -> list[tuple[str, object]]:
        """The item's junit properties of one of its records: a measured and a reused point
        leave the same."""
        ...

    def data_sha256(self, point: Point) -> str | None:
        """The digest of the data the point would be measured on now, which its stored
        result must have; None where the fingerprint covers it."""
        ...

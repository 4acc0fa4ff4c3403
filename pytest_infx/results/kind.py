"""What a kind of benchmark is to the layers that keep, store and show its results, as one
protocol: each kind package (``speedbench/``, ``agentic/``, ``fixedseq/``) exports one value
of it, and the run passes their :class:`Kinds` down, so no module below them asks which kind
a record is.

A kind answers for its records: where a record's file lives, the history row's key parts and
figures, the one-line figure a reused result is shown with, and its end-of-run table; and for
its points, what its client sends.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.records import Record


@dataclass(frozen=True)
class RowFacts:
    """The part of a history row only the record's kind knows: the row's benchmark, its
    dataset, load and cell (what no InferenceX column holds: a SPEED-Bench cell's draft length
    and thinking mode, a point's variant), lengths and golden verdict."""

    benchmark: str
    dataset: str
    conc: int
    cell: str
    isl: int = 0
    osl: int = 0
    golden: str | None = None


class BenchmarkKind(Protocol):
    """One kind of benchmark, as the results, the history and the report see it."""

    @property
    def name(self) -> str:
        """The ``kind`` of its points and of its records."""
        ...

    def result_path(self, layout: Layout, item_id: str) -> Path:
        """The result file of one of its items in the results folder ``layout``."""
        ...

    def row(self, record: Record) -> RowFacts:
        """The history row's parts of one of its records."""
        ...

    def metrics(self, record: Record) -> dict[str, float]:
        """The figures the history keeps of one of its records, under the names of
        :mod:`pytest_infx.baseline_tolerance`; a figure the record lacks is left out."""
        ...

    def figure(self, record: Record) -> str:
        """The record's headline, as a reused result is shown (``AL 2.08``)."""
        ...

    def client_settings(self, point: Point) -> dict[str, Any]:
        """What its client sends one of its points, in the client's own words: ``--infx-plan``
        shows it and ``infx compare-scripts`` holds it against InferenceX's client."""
        ...

    @property
    def title(self) -> str:
        """The heading of its end-of-run table."""
        ...

    def table(self, records: Sequence[Record]) -> list[str]:
        """The end-of-run table of its records, a line each; empty for none."""
        ...


class Kinds:
    """The kinds of a run by name: what results, history and report are handed."""

    def __init__(self, kinds: Iterable[BenchmarkKind]) -> None:
        self._by_name: dict[str, BenchmarkKind] = {}
        for kind in kinds:
            if kind.name in self._by_name:
                raise ValueError(f"two kinds are named {kind.name!r}")
            self._by_name[kind.name] = kind

    def __getitem__(self, name: str) -> BenchmarkKind:
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(sorted(self._by_name))
            raise KeyError(f"{name!r} is not a kind of this run (known: {known})") from None

    def __iter__(self) -> Iterator[BenchmarkKind]:
        return iter(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def of(self, record: Record) -> BenchmarkKind:
        """The kind of a record."""
        return self[record.kind]

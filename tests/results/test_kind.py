from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.recipes.points import Point
from pytest_infx.results.kind import BenchmarkKind, Kinds, RowFacts
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import Record
from results.samples import cell


@dataclass(frozen=True)
class _Named:
    """A kind that answers only to its name and where its files go."""

    name: str

    def result_path(self, layout: Layout, item_id: str) -> Path:
        return layout.root / self.name / f"{item_id}.json"

    def row(self, record: Record) -> RowFacts:
        return RowFacts(benchmark=self.name, dataset="d", conc=1, cell="")

    def metrics(self, record: Record) -> dict[str, float]:
        return {}

    def figure(self, record: Record) -> str:
        return self.name

    def client_settings(self, point: Point) -> dict[str, Any]:
        return {"kind": self.name}

    @property
    def title(self) -> str:
        return f"infx {self.name}"

    def table(self, records: Sequence[Record]) -> list[str]:
        return [record.id for record in records]


def test_a_record_finds_its_kind_by_its_kind_field() -> None:
    speedbench: BenchmarkKind = _Named("speedbench")
    kinds = Kinds((speedbench, _Named("other")))
    assert kinds.of(cell()) is speedbench
    assert kinds.names() == ("speedbench", "other")
    assert "other" in kinds and "agentic" not in kinds
    assert [kind.name for kind in kinds] == ["speedbench", "other"]


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"'agentic' is not a kind of this run \(known: a, b\)"):
        Kinds((_Named("b"), _Named("a")))["agentic"]


def test_two_kinds_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="two kinds are named 'a'"):
        Kinds((_Named("a"), _Named("a")))

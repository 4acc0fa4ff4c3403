"""SPEED-Bench as a kind of benchmark: where a cell's record lives, its history row and
figures, and its headline (:class:`~pytest_infx.results.kind.BenchmarkKind`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_infx.recipes.points import Cell, Point
from pytest_infx.results import verdict
from pytest_infx.results.kind import RowFacts
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import CellRecord, Record
from pytest_infx.speedbench.table import al_tables


def _cell(record: Record) -> CellRecord:
    if not isinstance(record, CellRecord):
        raise TypeError(f"{record.id} is a {record.kind} record, not a SPEED-Bench cell's")
    return record


def golden_of(record: CellRecord) -> str | None:
    """The cell's golden verdict as its row keeps it: ``recorded`` for a curve written."""
    if record.golden is None:
        return None
    if record.golden.recorded:
        return "recorded"
    return verdict.of(record.golden.ok)


class SpeedbenchBenchmark:
    """A SPEED-Bench cell: the acceptance length of one draft length and thinking mode."""

    name = "speedbench"
    title = "infx acceptance length"

    def result_path(self, layout: Layout, item_id: str) -> Path:
        return layout.cell(item_id)

    def row(self, record: Record) -> RowFacts:
        cell = _cell(record)
        point = cell.point
        return RowFacts(
            benchmark=self.name,
            dataset=cell.dataset.name,
            conc=point.concurrency,
            cell=f"k{point.draft_length}-{point.thinking}",
            golden=golden_of(cell),
        )

    def metrics(self, record: Record) -> dict[str, float]:
        """A point measured in passes gives the medians of its passes, which the history
        stores and the baseline gate judges."""
        cell = _cell(record)
        found: dict[str, float] = {}
        if cell.al is not None:
            found["al"] = cell.al
        if cell.acceptance_rate is not None:
            found["acceptance_rate"] = cell.acceptance_rate
        rate = cell.output_tokens_per_s
        if rate is not None:
            found["output_tput"] = rate
            found["output_tput_per_gpu"] = rate / cell.point.tp
        median = dict(cell.median or {})
        if cell.al is None:
            # a cell whose reported pass failed its checks has no AL, whatever its other passes had
            median.pop("al", None)
        return found | median

    def client_settings(self, point: Point) -> dict[str, Any]:
        cell = point.block_as(Cell, "a SPEED-Bench cell")
        bench = cell.bench
        return {
            "endpoint": "/v1/chat/completions",
            "stream": True,
            "concurrency": bench.concurrency,
            "max_tokens": bench.output_len,
            "sampling": bench.sampling.model_dump(exclude_none=True),
            "chat_template_kwargs": bench.thinking_modes[cell.thinking],
            "dataset": bench.dataset.model_dump(by_alias=True, exclude_none=True),
        }

    def figure(self, record: Record) -> str:
        al = _cell(record).al
        return "passed" if al is None else f"AL {al:.2f}"

    def table(self, records: Sequence[Record]) -> list[str]:
        return al_tables(_cell(record) for record in records)


KIND = SpeedbenchBenchmark()

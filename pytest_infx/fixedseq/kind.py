"""Fixed-seq-len as a kind of benchmark: where a point's record lives, its history row and
figures, and its headline (:class:`~pytest_infx.results.kind.BenchmarkKind`), and how a point
is measured against its server (:class:`~pytest_infx.results.measure.Measures`), which the
generic adapter runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_infx.baseline_tolerance import METRICS
from pytest_infx.fixedseq import measure
from pytest_infx.fixedseq.table import text_table
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import FixedSeqLen
from pytest_infx.results.kind import RowFacts
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import FixedRecord, Record

if TYPE_CHECKING:
    from pytest_infx.launch import ServerHandle
    from pytest_infx.results.measure import MeasureContext

BENCHMARK = "fixed-seq-len"
"""InferenceX's benchmark type of a fixed-seq-len row, which our rows share so that a
baseline ingested from its files and one of ours are found alike."""


def _fixed(record: Record) -> FixedRecord:
    if not isinstance(record, FixedRecord):
        raise TypeError(f"{record.id} is a {record.kind} record, not a fixed-seq-len point's")
    return record


class FixedSeqLenBenchmark:
    """A fixed-seq-len point: throughput and latency of one TP, ISL/OSL and concurrency."""

    name = "fixed_seq_len"
    title = "infx fixed-seq-len"

    def result_path(self, layout: Layout, item_id: str) -> Path:
        return layout.fixed_point(item_id)

    def row(self, record: Record) -> RowFacts:
        fixed = _fixed(record)
        point = fixed.point
        return RowFacts(
            benchmark=BENCHMARK,
            dataset=fixed.prompts.dataset,
            conc=point.concurrency,
            cell=point.variant or "",
            isl=point.isl,
            osl=point.osl,
        )

    def metrics(self, record: Record) -> dict[str, float]:
        return {name: value for name, value in _fixed(record).figures.items() if name in METRICS}

    def client_settings(self, point: Point) -> dict[str, Any]:
        """The settings of InferenceX's ``benchmark_serving.py`` for the point."""
        block = point.block_as(FixedSeqLen, "a fixed-seq-len point")
        conc = point.concurrency
        return {
            "model": point.recipe.model.served_name,
            "endpoint": "/v1/completions",
            "stream": True,
            "dataset": "random",
            "input_len": point.isl,
            "output_len": point.osl,
            "random_range_ratio": block.random_range_ratio,
            "num_prompts": block.prompts_per_concurrency * conc,
            "max_concurrency": conc,
            "request_rate": "inf",
            "ignore_eos": True,
            "num_warmups": block.warmups_per_concurrency * conc,
            "seed": block.seed,
            "chat_template": block.chat_template,
        }

    def figure(self, record: Record) -> str:
        per_gpu = _fixed(record).figures.get("output_tput_per_gpu", 0.0)
        return f"{per_gpu:.1f} output tok/s/GPU"

    def table(self, records: Sequence[Record]) -> list[str]:
        return text_table([_fixed(record) for record in records]) if records else []

    def measure(self, point: Point, server: ServerHandle, context: MeasureContext) -> Record:
        return measure.measure(point, server, context)

    def properties(self, record: Record) -> list[tuple[str, object]]:
        return measure.properties(record)

    def data_sha256(self, point: Point) -> str | None:
        """The prompts follow from the tokenizer, the lengths and the seed, which the
        fingerprint covers but for the tokenizer's files: a stored result is judged by its
        fingerprint alone."""
        return None


KIND = FixedSeqLenBenchmark()

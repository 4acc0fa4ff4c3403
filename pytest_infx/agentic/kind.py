"""AgentX as a kind of benchmark: where a point's record lives, its history row and figures,
and its headline (:class:`~pytest_infx.results.kind.BenchmarkKind`), and how a point is
measured against its server (:class:`~pytest_infx.results.measure.Measures`), which the
generic adapter runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_infx.agentic import measure
from pytest_infx.agentic.runner import SCENARIO
from pytest_infx.agentic.table import render_tables
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import Agentic
from pytest_infx.results.kind import RowFacts
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import InferencexThroughput, Percentiles, PointRecord, Record

if TYPE_CHECKING:
    from pytest_infx.launch import ServerHandle
    from pytest_infx.results.measure import MeasureContext, Measurement


def _point(record: Record) -> PointRecord:
    if not isinstance(record, PointRecord):
        raise TypeError(f"{record.id} is a {record.kind} record, not an AgentX point's")
    return record


def _percentiles(name: str, block: Percentiles) -> dict[str, float]:
    return {
        f"median_{name}": block.p50 / 1000.0,
        f"p90_{name}": block.p90 / 1000.0,
        f"p99_{name}": block.p99 / 1000.0,
    }


class AgenticBenchmark:
    """An AgentX point: throughput of one TP and concurrency replaying agentic traces."""

    name = "agentic"
    title = "infx agentic"

    def result_path(self, layout: Layout, item_id: str) -> Path:
        return layout.point(item_id)

    def row(self, record: Record) -> RowFacts:
        point = _point(record)
        return RowFacts(
            benchmark=self.name,
            dataset="builtin-traces" if point.traces_sha256 else "hub-traces",
            conc=point.concurrency,
            cell=point.point.variant or "",
        )

    def metrics(self, record: Record) -> dict[str, float]:
        """A point measured in passes gives the medians of its passes, which the history
        stores and the baseline gate judges."""
        point = _point(record)
        throughput = point.throughput
        found: dict[str, float] = {}
        if throughput.output_tokens_per_s_per_gpu is not None:
            found["output_tput_per_gpu"] = throughput.output_tokens_per_s_per_gpu
        if isinstance(throughput, InferencexThroughput):
            found["tput_per_gpu"] = throughput.total_tokens_per_s_per_gpu
            found["input_tput_per_gpu"] = throughput.input_tokens_per_s_per_gpu
        latency = point.latency_ms
        for name, block in (("ttft", latency.ttft), ("tpot", latency.tpot), ("e2el", latency.e2e)):
            if block is not None:
                found.update(_percentiles(name, block))
        for stat in ("median", "p90", "p99"):
            tpot = found.get(f"{stat}_tpot")
            if tpot is not None and tpot > 0:
                found[f"{stat}_intvty"] = 1.0 / tpot
        return found | (point.median or {})

    def client_settings(self, point: Point) -> dict[str, Any]:
        """The settings of the aiperf replay InferenceX's AgentX scripts run for the point."""
        block = point.block_as(Agentic, "an AgentX point")
        return {
            "client": "aiperf",
            "scenario": SCENARIO,
            "endpoint": "/v1/chat/completions",
            "endpoint_type": "chat",
            "stream": True,
            "use_server_token_count": True,
            "num_dataset_entries": None if block.traces == "builtin" else block.num_dataset_entries,
            "concurrency": point.concurrency,
            "duration_s": block.duration,
            "seed": block.seed,
            "trajectory_start_ratio": block.trajectory_start_ratio,
            "trace_idle_gap_cap_s": block.trace_idle_gap_cap,
            "warmup_grace_period_s": block.warmup_grace_period,
            "max_context_length": point.recipe.model.max_model_len,
            "request_count": block.request_count,
            "traces": block.traces,
            "failed_request_threshold": block.failed_request_threshold,
            "chat_template": block.chat_template,
        }

    def figure(self, record: Record) -> str:
        measured = _point(record).throughput.output_tokens_per_s_per_gpu
        return "passed" if measured is None else f"{measured:.1f} output tok/s/GPU"

    def table(self, records: Sequence[Record]) -> list[str]:
        return render_tables(_point(record) for record in records).splitlines()

    def measure(self, point: Point, server: ServerHandle, context: MeasureContext) -> Measurement:
        return measure.measure(point, server, context, self.metrics)

    def properties(self, record: Record) -> list[tuple[str, object]]:
        return measure.properties(record)

    def data_sha256(self, point: Point) -> str | None:
        """The digest of the shipped traces the point replays; None for a hub corpus."""
        return measure.traces_sha256(point)


KIND = AgenticBenchmark()

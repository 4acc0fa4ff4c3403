"""The figures the history keeps of a point, read from our records and InferenceX's files
under the names and units of ``pytest_infx.baseline_tolerance``: keeping InferenceX's names lets its
files and ours sit in one table and be compared by one gate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_infx.baseline_tolerance import LATENCIES, METRICS
from pytest_infx.files.numbers import figure

if TYPE_CHECKING:
    from pytest_infx.results.kind import BenchmarkKind
    from pytest_infx.results.records import Record

Metrics = dict[str, float]


def of_record(record: Record, kind: BenchmarkKind) -> Metrics:
    """The figures of one of our result records, ``kind``'s and its GPUs'; a figure the record
    lacks is left out."""
    return kind.metrics(record) | _of_telemetry(record)


def _of_telemetry(record: Record) -> Metrics:
    """Mean GPU power and output tokens per joule, for a point measured with GPU telemetry."""
    telemetry = record.gpu_telemetry
    if telemetry is None:
        return {}
    pairs = (
        ("gpu_power_w", telemetry.mean_power_w),
        ("output_tokens_per_joule", telemetry.output_tokens_per_joule),
    )
    return {name: value for name, value in pairs if value is not None}


def of_inferencex(agg: Mapping[str, object]) -> Metrics:
    """The figures of one of InferenceX's processed results: a fixed-seq-len ``agg_*.json`` row
    (flat keys, seconds) or an AgentX aggregate (nested ``request_metrics``). A figure that is
    there but not a finite number of at least 0 raises NumberError naming it."""
    found: Metrics = {}
    for name in METRICS:
        value = agg.get(name)
        if value is not None:
            found[name] = figure(value, name)
    request_metrics = agg.get("request_metrics")
    if isinstance(request_metrics, Mapping):
        found.update(_of_agentx(request_metrics))
    return found


def _of_agentx(block: Mapping[str, object]) -> Metrics:
    found: Metrics = {}
    throughput = block.get("throughput")
    per_gpu = throughput.get("per_gpu") if isinstance(throughput, Mapping) else None
    if isinstance(per_gpu, Mapping):
        for ours, theirs in (
            ("tput_per_gpu", "total_tput_tps"),
            ("output_tput_per_gpu", "output_tput_tps"),
            ("input_tput_per_gpu", "input_tput_tps"),
        ):
            value = per_gpu.get(theirs)
            if value is not None:
                found[ours] = figure(value, f"request_metrics.throughput.per_gpu.{theirs}")
    latency = block.get("latency")
    if isinstance(latency, Mapping):
        for name in (*LATENCIES, "intvty"):
            stats = latency.get(name)
            if not isinstance(stats, Mapping):
                continue
            for stat, theirs in (("mean", "mean"), ("median", "p50"), ("p90", "p90")):
                value = stats.get(theirs)
                if value is not None:
                    field = f"request_metrics.latency.{name}.{theirs}"
                    found[f"{stat}_{name}"] = figure(value, field)
    return found

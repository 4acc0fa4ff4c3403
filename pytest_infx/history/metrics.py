"""The figures the history keeps of a point, under InferenceX's names and units.

InferenceX's processed results name throughput ``tput_per_gpu`` (input and output tokens per
second per GPU) and give latencies in seconds as ``median_ttft``, ``p99_e2el`` and so on, with
``intvty`` the inverse of TPOT. Keeping those names lets its files and ours sit in one table
and be compared by one gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pytest_infx.results.records import CellRecord, Percentiles, PointRecord, Record

Metrics = dict[str, float]


@dataclass(frozen=True)
class Metric:
    """How a figure is read: whether more is better, and the unit it is shown in (``scale``
    turns the stored value into that unit)."""

    name: str
    higher_is_better: bool
    unit: str
    scale: float = 1.0

    def shown(self, value: float) -> float:
        return value * self.scale


_THROUGHPUT = ("tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "output_tput")
_LATENCIES = ("ttft", "tpot", "itl", "e2el")
_STATS = ("mean", "median", "p90", "p99", "p99.9")


def _catalog() -> dict[str, Metric]:
    found = {name: Metric(name, True, "tok/s/gpu") for name in _THROUGHPUT}
    found["output_tput"] = Metric("output_tput", True, "tok/s")
    for stat in _STATS:
        for latency in _LATENCIES:
            name = f"{stat}_{latency}"
            found[name] = Metric(name, False, "ms", 1000.0)
        found[f"{stat}_intvty"] = Metric(f"{stat}_intvty", True, "tok/s/user")
    found["al"] = Metric("al", True, "tokens")
    found["acceptance_rate"] = Metric("acceptance_rate", True, "")
    return found


METRICS: Final[Mapping[str, Metric]] = _catalog()

TABLE_METRICS: Final = (
    "tput_per_gpu",
    "output_tput_per_gpu",
    "median_ttft",
    "p90_ttft",
    "p99_ttft",
    "p99.9_ttft",
    "median_intvty",
    "p90_intvty",
    "p99_intvty",
    "p99.9_intvty",
    "median_e2el",
    "p90_e2el",
    "p99_e2el",
    "p99.9_e2el",
    "al",
)
"""The columns of InferenceX's comparison table (``compare_results.py``), in its order, and
the AL of a SPEED-Bench cell."""


def metric(name: str) -> Metric:
    """The metric called ``name``; a KeyError lists the known names."""
    try:
        return METRICS[name]
    except KeyError:
        known = ", ".join(sorted(METRICS))
        raise KeyError(f"{name!r} is not a metric the history keeps; known: {known}") from None


def of_record(record: Record) -> Metrics:
    """The figures of one of our result records; a figure the record lacks is left out."""
    from pytest_infx.results.records import CellRecord

    if isinstance(record, CellRecord):
        return _of_cell(record)
    return _of_point(record)


def _of_cell(record: CellRecord) -> Metrics:
    found: Metrics = {}
    if record.al is not None:
        found["al"] = record.al
    if record.acceptance_rate is not None:
        found["acceptance_rate"] = record.acceptance_rate
    requests = record.requests
    if requests.wall_s > 0:
        rate = requests.completion_tokens / requests.wall_s
        found["output_tput"] = rate
        found["output_tput_per_gpu"] = rate / record.point.tp
    return found


def _of_point(record: PointRecord) -> Metrics:
    from pytest_infx.results.records import InferencexThroughput

    throughput = record.throughput
    found: Metrics = {"output_tput_per_gpu": throughput.output_tokens_per_s_per_gpu}
    if isinstance(throughput, InferencexThroughput):
        found["tput_per_gpu"] = throughput.total_tokens_per_s_per_gpu
        found["input_tput_per_gpu"] = throughput.input_tokens_per_s_per_gpu
    latency = record.latency_ms
    for name, block in (("ttft", latency.ttft), ("tpot", latency.tpot), ("e2el", latency.e2e)):
        if block is not None:
            found.update(_percentiles(name, block))
    for stat in ("median", "p90", "p99"):
        tpot = found.get(f"{stat}_tpot")
        if tpot is not None and tpot > 0:
            found[f"{stat}_intvty"] = 1.0 / tpot
    return found


def _percentiles(name: str, block: Percentiles) -> Metrics:
    return {
        f"median_{name}": block.p50 / 1000.0,
        f"p90_{name}": block.p90 / 1000.0,
        f"p99_{name}": block.p99 / 1000.0,
    }


def of_inferencex(agg: Mapping[str, object]) -> Metrics:
    """The figures of one of InferenceX's processed results: a fixed-seq-len ``agg_*.json`` row
    (flat keys, seconds) or an AgentX aggregate (nested ``request_metrics``)."""
    found: Metrics = {}
    for name in METRICS:
        value = agg.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            found[name] = float(value)
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
            if isinstance(value, int | float) and not isinstance(value, bool):
                found[ours] = float(value)
    latency = block.get("latency")
    if isinstance(latency, Mapping):
        for name in (*_LATENCIES, "intvty"):
            stats = latency.get(name)
            if not isinstance(stats, Mapping):
                continue
            for stat, theirs in (("mean", "mean"), ("median", "p50"), ("p90", "p90")):
                value = stats.get(theirs)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    found[f"{stat}_{name}"] = float(value)
    return found

"""An AgentX point's figures computed as InferenceX computes them, from aiperf's per-request
records (``profile_export.jsonl``).

InferenceX does not take aiperf's summary numbers: its ``process_agentic_result.py`` (with
``request_metrics.py`` and ``aggregation_common.py``) keeps the successful profiling records,
sums their input and output tokens over the span from the first request start to the last
request end, divides by TP x PP x PCP for "per GPU", and takes latency percentiles with its own
linear interpolation. aiperf's ``output_token_throughput`` divides by the benchmark duration
instead, so the two differ; this module reproduces InferenceX's, key for key, so its
aggregation and dashboards read our file as one of theirs.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pytest_infx.agentic.results import ExportError
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.records import InferencexThroughput

RECORDS_NAME = "profile_export.jsonl"
SCENARIO_TYPE = "agentic-coding"
_STATS = ("mean", "p50", "p75", "p90", "p95")
_Number = TypeVar("_Number", int, float)


@dataclass(frozen=True)
class RecordSet:
    """The successful profiling records of one run and the count of what was dropped."""

    records: tuple[Mapping[str, Any], ...]
    total: int
    warmup_dropped: int
    error_dropped: int
    error_categories: Mapping[str, int]

    @property
    def accounting(self) -> dict[str, Any]:
        return {
            "records_total": self.total,
            "records_profiled": len(self.records),
            "records_dropped_total": self.total - len(self.records),
            "records_warmup_dropped": self.warmup_dropped,
            "records_error_dropped": self.error_dropped,
            "error_categories": dict(self.error_categories),
        }


def parse_records(lines: Iterable[str], *, source: str = RECORDS_NAME) -> RecordSet:
    """Keep what InferenceX keeps: a record with a phase other than ``profiling`` is warm-up,
    one with a truthy ``error`` failed; both are counted and dropped (a record without a phase
    counts as profiling, as in older aiperf exports)."""
    kept: list[Mapping[str, Any]] = []
    total = warmup = errors = 0
    categories: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ExportError(
                f"{source}:{number}: not a JSON record ({exc.msg}); was aiperf stopped mid-write?"
            ) from None
        if not isinstance(record, dict):
            raise ExportError(f"{source}:{number}: a record is a JSON object")
        total += 1
        metadata = record.get("metadata") or {}
        phase = metadata.get("benchmark_phase") if isinstance(metadata, dict) else None
        is_warmup = phase is not None and phase != "profiling"
        error = record.get("error")
        if is_warmup:
            warmup += 1
        if error:
            errors += 1
            category = _error_category(error)
            categories[category] = categories.get(category, 0) + 1
        if error or is_warmup:
            continue
        kept.append(record)
    return RecordSet(tuple(kept), total, warmup, errors, categories)


def load_records(path: Path) -> RecordSet:
    if not path.is_file():
        raise ExportError(
            f"{path}: aiperf's per-request records are missing; they are written at "
            "--export-level records (aiperf's default), so the run did not finish"
        )
    with path.open(encoding="utf-8") as handle:
        return parse_records(handle, source=str(path))


def _error_category(error: Any) -> str:
    if isinstance(error, dict):
        for key in ("type", "error_type", "code", "class", "status"):
            value = error.get(key)
            if value not in (None, ""):
                return str(value)
        message = error.get("message") or error.get("error")
    else:
        message = error
    if not message:
        return "unknown"
    first_line = str(message).strip().splitlines()[0]
    return (first_line.split(":", 1)[0] or "unknown")[:120]


def percentile(data: list[float], p: float) -> float:
    """Linear interpolation between closest ranks, InferenceX's ``percentile``."""
    if not data:
        return 0.0
    ordered = sorted(data)
    k = (len(ordered) - 1) * (p / 100)
    f = int(k)
    c = f + 1
    if c >= len(ordered):
        return ordered[f]
    return ordered[f] + (k - f) * (ordered[c] - ordered[f])


def stats(values: list[float]) -> dict[str, float]:
    """mean, p50, p75, p90, p95 and population std; empty when there are no values."""
    if not values:
        return {}
    return {
        "mean": statistics.mean(values),
        "p50": percentile(values, 50),
        "p75": percentile(values, 75),
        "p90": percentile(values, 90),
        "p95": percentile(values, 95),
        "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
    }


def _metric(record: Mapping[str, Any], key: str) -> Any:
    metric = (record.get("metrics") or {}).get(key)
    return metric.get("value") if isinstance(metric, dict) else metric


def _numbers(
    records: Iterable[Mapping[str, Any]],
    key: str,
    convert: Callable[[Any], _Number],
    skipped: tuple[type[Exception], ...],
) -> list[_Number]:
    """The records' values of ``key`` that ``convert`` takes; one it refuses with an error of
    ``skipped`` (a missing or non-numeric metric) is left out rather than failing the point."""
    out: list[_Number] = []
    for record in records:
        value = _metric(record, key)
        try:
            out.append(convert(value))
        except skipped:
            continue
    return out


def _floats(records: Iterable[Mapping[str, Any]], key: str) -> list[float]:
    return _numbers(records, key, float, (TypeError, ValueError))


def _ints(records: Iterable[Mapping[str, Any]], key: str) -> list[int]:
    # an infinite float has no int, which int() says with OverflowError
    return _numbers(records, key, int, (TypeError, ValueError, OverflowError))


def _seconds(values_ms: list[float]) -> list[float]:
    return [v / 1000.0 for v in values_ms if math.isfinite(v) and v > 0]


def _stamps(records: Iterable[Mapping[str, Any]], key: str) -> list[int]:
    out = []
    for record in records:
        metadata = record.get("metadata") or {}
        if metadata.get(key):
            out.append(int(metadata[key]))
    return out


def throughput(records: tuple[Mapping[str, Any], ...]) -> dict[str, float]:
    """Tokens per second over (last request end - first request start); empty without a span."""
    starts = _stamps(records, "request_start_ns")
    ends = _stamps(records, "request_end_ns")
    if not starts or not ends:
        return {}
    duration = (max(ends) - min(starts)) / 1e9
    if duration <= 0:
        return {}
    total_input = sum(_ints(records, "input_sequence_length"))
    total_output = sum(_ints(records, "output_sequence_length"))
    return {
        "input_tput_tps": total_input / duration,
        "output_tput_tps": total_output / duration,
        "total_tput_tps": (total_input + total_output) / duration,
        "duration_seconds": duration,
    }


def _inverse(latency: Mapping[str, float], values: list[float]) -> dict[str, float]:
    """Interactivity (tokens/s one user sees): 1 / the matching latency statistic."""
    out = {key: 1.0 / latency[key] for key in _STATS if latency.get(key, 0) > 0}
    per_request = [1.0 / v for v in values if v > 0]
    if per_request:
        out["std"] = statistics.pstdev(per_request) if len(per_request) > 1 else 0.0
    return out


def latency(records: tuple[Mapping[str, Any], ...]) -> dict[str, dict[str, float]]:
    """Seconds; ``tpot`` is aiperf's inter-token latency, as InferenceX reports it."""
    ttfts = _seconds(_floats(records, "time_to_first_token"))
    e2els = _seconds(_floats(records, "request_latency"))
    itls = _seconds(_floats(records, "inter_token_latency"))
    full = _seconds(_floats(records, "full_response_inter_token_latency"))
    per_token: list[float] = []
    for record in records:
        e2el = _metric(record, "request_latency")
        osl = _metric(record, "output_sequence_length")
        try:
            e2el_s, tokens = float(e2el) / 1000.0, float(osl)
        except (TypeError, ValueError):
            continue
        if math.isfinite(e2el_s) and math.isfinite(tokens) and e2el_s > 0 and tokens > 0:
            per_token.append(e2el_s / tokens)
    itl = stats(itls)
    full_itl = stats(full)
    return {
        "ttft": stats(ttfts),
        "e2el": stats(e2els),
        "itl": itl,
        "tpot": stats(itls),
        "intvty": _inverse(itl, itls),
        "e2e_norm_intvty": _inverse(stats(per_token), per_token),
        "full_response_itl": full_itl,
        "full_response_intvty": _inverse(full_itl, full),
    }


def _qps(records: tuple[Mapping[str, Any], ...]) -> dict[str, Any]:
    ends = sorted(t / 1e9 for t in _stamps(records, "request_end_ns"))
    if len(ends) < 2 or ends[-1] - ends[0] <= 0:
        return {}
    values: list[float] = []
    current = ends[0]
    while current + 1.0 <= ends[-1]:
        values.append(float(sum(1 for t in ends if current <= t < current + 1.0)))
        current += 1.0
    if not values:
        return {"window_seconds": 1.0, "samples": 0, "mean": len(ends) / (ends[-1] - ends[0])}
    return {"window_seconds": 1.0, "samples": len(values), **stats(values)}


def _token_stats(values: list[int]) -> dict[str, float]:
    return stats([float(v) for v in values])


def _cache_hit_rate(export: Mapping[str, Any]) -> float | None:
    metric = export.get("theoretical_prefix_cache_hit")
    if not isinstance(metric, dict):
        return None
    hits, count = metric.get("sum"), metric.get("count")
    if isinstance(hits, int | float) and isinstance(count, int | float) and count > 0:
        return float(hits) / float(count)
    avg = metric.get("avg")
    if not isinstance(avg, int | float):
        return None
    return float(avg) / 100.0 if str(metric.get("unit", "")).strip() == "%" else float(avg)


def request_metrics(
    found: RecordSet, export: Mapping[str, Any], *, num_gpus: int
) -> dict[str, Any]:
    """InferenceX's ``request_metrics`` block, ``throughput.per_gpu`` divided by ``num_gpus``."""
    if num_gpus < 1:
        raise ValueError(f"num_gpus must be >= 1, got {num_gpus}")
    records = found.records
    flat = throughput(records)
    block: dict[str, Any] = {}
    if flat:
        block = {
            "input": {"tokens_per_second": flat["input_tput_tps"]},
            "output": {"tokens_per_second": flat["output_tput_tps"]},
            "total": {"tokens_per_second": flat["total_tput_tps"]},
            "duration_seconds": flat["duration_seconds"],
            "per_gpu": {
                "total_tput_tps": flat["total_tput_tps"] / num_gpus,
                "output_tput_tps": flat["output_tput_tps"] / num_gpus,
                "input_tput_tps": flat["input_tput_tps"] / num_gpus,
            },
        }
    hit_rate = _cache_hit_rate(export)
    return {
        "qps": _qps(records),
        "latency": latency(records),
        "tokens": {
            "input": _token_stats(_ints(records, "input_sequence_length")),
            "output_actual": _token_stats(_ints(records, "output_sequence_length")),
            "output_expected": {},
        },
        "throughput": block,
        "cache": {"theoretical_cache_hit_rate": hit_rate},
    }


def build_aggregate(
    found: RecordSet,
    export: Mapping[str, Any],
    identity: ConfigIdentity,
) -> dict[str, Any]:
    """The body of InferenceX's single-node ``<RESULT_FILENAME>.json``, floats rounded as it
    rounds them. Server-side metrics are not aggregated (see the README), so that block is
    empty and says so in ``warnings``."""
    agg: dict[str, Any] = {
        "hw": identity.runner,
        "conc": identity.conc,
        "image": identity.image or "",
        "recipe_fingerprint": identity.fingerprint,
        "model": identity.model,
        "infmax_model_prefix": identity.model_prefix,
        "framework": identity.framework,
        "precision": identity.precision,
        "spec_decoding": identity.spec_method,
        "disagg": False,
        "scenario_type": SCENARIO_TYPE,
        "is_multinode": False,
        "tp": identity.tp,
        "ep": identity.ep,
        "dp_attention": "true" if identity.dp_attention else "false",
        "kv_offloading": "none",
        "kv_offload_backend": None,
        "allocated_cpu_dram_gb": 0,
        "num_requests_total": found.total,
        "num_requests_successful": len(found.records),
        "request_accounting": found.accounting,
        "pp": identity.pp,
        "dcp_size": identity.dcp,
        "pcp_size": identity.pcp,
    }
    metadata = export.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("dataset"), dict):
        agg["dataset"] = metadata["dataset"]
    agg["request_metrics"] = request_metrics(found, export, num_gpus=identity.gpus)
    agg["server_metrics"] = {"cache": {}, "kv_cache": {}}
    agg["kv_cache_pool_tokens"] = None
    agg["warnings"] = ["server metrics are not aggregated by pytest-infx"]
    rounded: dict[str, Any] = round_floats(agg)
    return rounded


def round_floats(obj: Any, decimal_places: int = 5) -> Any:
    """InferenceX's rounding: five places, and a whole float of magnitude >= 1 becomes an int."""
    if isinstance(obj, float):
        if not math.isfinite(obj):
            return obj
        rounded = round(obj, decimal_places)
        if abs(rounded) >= 1 and rounded.is_integer():
            return int(rounded)
        return rounded
    if isinstance(obj, dict):
        return {key: round_floats(value, decimal_places) for key, value in obj.items()}
    if isinstance(obj, list):
        return [round_floats(value, decimal_places) for value in obj]
    return obj


def headline(
    agg: Mapping[str, Any], *, num_gpus: int, requests_per_s: float | None
) -> InferencexThroughput | None:
    """The throughput block of our own result file, from an aggregate: InferenceX's per-GPU
    figures and the output rate one user sees (1 / median ITL); None without a throughput
    span. ``requests_per_s`` is aiperf's request rate, which the aggregate does not hold (None
    where aiperf's was no finite figure)."""
    metrics = agg.get("request_metrics") or {}
    block = metrics.get("throughput") or {}
    if not block:
        return None
    intvty = (metrics.get("latency") or {}).get("intvty") or {}
    return InferencexThroughput(
        method="inferencex",
        total_tokens_per_s=block["total"]["tokens_per_second"],
        output_tokens_per_s=block["output"]["tokens_per_second"],
        input_tokens_per_s=block["input"]["tokens_per_second"],
        total_tokens_per_s_per_gpu=block["per_gpu"]["total_tput_tps"],
        output_tokens_per_s_per_gpu=block["per_gpu"]["output_tput_tps"],
        input_tokens_per_s_per_gpu=block["per_gpu"]["input_tput_tps"],
        output_tokens_per_s_per_user=intvty.get("p50"),
        duration_s=block["duration_seconds"],
        gpus=num_gpus,
        requests_per_s=requests_per_s,
    )

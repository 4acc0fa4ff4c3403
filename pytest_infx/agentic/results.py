"""aiperf's JSON export (``profile_export_aiperf.json``) as one frozen value per AgentX point.

The export is a flat map of metric tag to ``{"unit", "avg", "p50", ...}`` plus a few plain keys.
aiperf 0.13.0 counts requests in three tags whose names mislead: ``request_count`` holds the
*successful* requests, ``error_request_count`` the failed ones, and ``completed_request_count``
their sum (every request that finished, either way). Tags for latencies are absent when no request
succeeded, so those fields are optional; the counts are never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXPORT_NAME = "profile_export_aiperf.json"


class ExportError(ValueError):
    """The export is missing or not what aiperf writes; the message names the file."""


@dataclass(frozen=True, kw_only=True)
class MeasuredPercentiles:
    """Milliseconds (or the metric's own unit) at p50, p90 and p99."""

    p50: float
    p90: float
    p99: float


@dataclass(frozen=True, kw_only=True)
class ErrorKind:
    """One row of aiperf's error summary."""

    code: int | None
    kind: str
    message: str
    count: int


@dataclass(frozen=True, kw_only=True)
class AgenticResult:
    """One AgentX point as measured by aiperf.

    ``total`` is every request that finished, ``completed`` those that succeeded, ``failed``
    those that ended in an error; ``total == completed + failed``.
    """

    export_path: Path
    aiperf_version: str
    scenario: str | None
    submission_valid: bool | None
    submission_invalid_reasons: tuple[str, ...]
    was_cancelled: bool
    gpus: int
    duration_s: float
    total: int
    completed: int
    failed: int
    output_tokens: int
    output_throughput: float
    request_rate: float
    ttft_ms: MeasuredPercentiles | None
    tpot_ms: MeasuredPercentiles | None
    e2e_ms: MeasuredPercentiles | None
    errors: tuple[ErrorKind, ...]
    exit_code: int = 0
    console_tail: tuple[str, ...] = ()
    """aiperf's last console lines when it exited non-zero: its console stays in its log file,
    and a failure shows why without opening it."""

    @property
    def error_ratio(self) -> float:
        return self.failed / self.total if self.total else 0.0

    @property
    def output_throughput_per_gpu(self) -> float:
        """Output tokens per second per GPU, the AgentX headline number."""
        return self.output_throughput / self.gpus

    @property
    def interactivity(self) -> float | None:
        """Tokens per second one user sees while decoding: 1000 / median TPOT in ms."""
        if self.tpot_ms is None or self.tpot_ms.p50 <= 0:
            return None
        return 1000.0 / self.tpot_ms.p50


def parse_export(path: Path, *, gpus: int) -> AgenticResult:
    """Read an export file; ``gpus`` is how many GPUs served the point (TP for one node)."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus}")
    if not path.is_file():
        raise ExportError(
            f"{path}: aiperf export not found; aiperf did not finish the run "
            "(see its log under the artifact dir's logs/aiperf.log)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ExportError(
            f"{path}: not valid JSON ({exc}); was the run killed mid-write?"
        ) from None
    if not isinstance(data, dict) or "aiperf_version" not in data:
        raise ExportError(f"{path}: not an aiperf profile export (no 'aiperf_version' key)")
    reader = _Reader(path, data)
    completed = reader.count("request_count")
    failed = reader.count("error_request_count")
    total = reader.count("completed_request_count", default=completed + failed)
    if total != completed + failed:
        raise ExportError(
            f"{path}: completed_request_count={total} is not request_count={completed} + "
            f"error_request_count={failed}; this export layout is not the one aiperf 0.13 writes"
        )
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ExportError(f"{path}: 'metadata' must be an object, got {type(metadata).__name__}")
    valid = metadata.get("submission_valid")
    return AgenticResult(
        export_path=path,
        aiperf_version=str(data["aiperf_version"]),
        scenario=metadata.get("scenario"),
        submission_valid=valid if isinstance(valid, bool) else None,
        submission_invalid_reasons=tuple(
            str(reason) for reason in metadata.get("submission_invalid_reasons") or ()
        ),
        was_cancelled=bool(data.get("was_cancelled", False)),
        gpus=gpus,
        duration_s=reader.average("benchmark_duration", "sec") or 0.0,
        total=total,
        completed=completed,
        failed=failed,
        output_tokens=reader.count("total_output_tokens"),
        output_throughput=reader.average("output_token_throughput", "tokens/sec") or 0.0,
        request_rate=reader.average("request_throughput", "requests/sec") or 0.0,
        ttft_ms=reader.percentiles("time_to_first_token", "ms"),
        tpot_ms=reader.percentiles("inter_token_latency", "ms"),
        e2e_ms=reader.percentiles("request_latency", "ms"),
        errors=reader.errors(),
    )


class _Reader:
    """Typed access to metric tags, every failure naming the file and the tag."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self._path = path
        self._data = data

    def _metric(self, tag: str, unit: str | None) -> dict[str, Any] | None:
        metric = self._data.get(tag)
        if metric is None:
            return None
        if not isinstance(metric, dict):
            raise ExportError(f"{self._path}: {tag!r} must be a metric object, got {metric!r}")
        if unit is not None and metric.get("unit") != unit:
            raise ExportError(
                f"{self._path}: {tag!r} is in {metric.get('unit')!r}, expected {unit!r}; "
                "aiperf changed its export units, so the numbers cannot be trusted"
            )
        return metric

    def _number(self, tag: str, metric: dict[str, Any], stat: str) -> float:
        value = metric.get(stat)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ExportError(f"{self._path}: {tag}.{stat} must be a number, got {value!r}")
        return float(value)

    def average(self, tag: str, unit: str) -> float | None:
        metric = self._metric(tag, unit)
        return None if metric is None else self._number(tag, metric, "avg")

    def count(self, tag: str, *, default: int = 0) -> int:
        metric = self._metric(tag, None)
        if metric is None:
            return default
        value = self._number(tag, metric, "avg")
        if value < 0 or value != int(value):
            raise ExportError(f"{self._path}: {tag}.avg must be a whole count, got {value}")
        return int(value)

    def percentiles(self, tag: str, unit: str) -> MeasuredPercentiles | None:
        metric = self._metric(tag, unit)
        if metric is None:
            return None
        return MeasuredPercentiles(
            p50=self._number(tag, metric, "p50"),
            p90=self._number(tag, metric, "p90"),
            p99=self._number(tag, metric, "p99"),
        )

    def errors(self) -> tuple[ErrorKind, ...]:
        rows = self._data.get("error_summary") or []
        if not isinstance(rows, list):
            raise ExportError(f"{self._path}: 'error_summary' must be a list")
        kinds = []
        for index, row in enumerate(rows):
            details = row.get("error_details") if isinstance(row, dict) else None
            if not isinstance(details, dict):
                raise ExportError(f"{self._path}: error_summary[{index}] has no error_details")
            code = details.get("code")
            kinds.append(
                ErrorKind(
                    code=code if isinstance(code, int) else None,
                    kind=str(details.get("type") or ""),
                    message=str(details.get("message") or ""),
                    count=int(row.get("count", 0)),
                )
            )
        return tuple(kinds)

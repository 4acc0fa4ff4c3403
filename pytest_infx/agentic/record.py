"""The result file content of one AgentX point.

The plugin writes one JSON file per item; this module only builds the JSON value, so the same
record feeds the file, the terminal table and any later comparison without re-reading aiperf.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_infx.agentic.gate import GateVerdict
from pytest_infx.agentic.results import AgenticResult, Percentiles
from pytest_infx.results import verdict as vocabulary

IDENTITY_KEYS = ("recipe", "model", "engine", "image", "tp", "concurrency", "gpu")
RECORD_KIND = "agentic"


def result_record(
    identity: Mapping[str, Any],
    result: AgenticResult,
    *,
    verdict: GateVerdict | None = None,
    throughput: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON-ready record; ``identity`` holds the keys in :data:`IDENTITY_KEYS`.

    ``image`` may be None (a CPU run has a command, not an image); the others must be set.
    ``throughput`` is the block computed the InferenceX way from the per-request records
    (``aggregate.headline``); without it the block holds aiperf's own summary figures, whose
    output rate is over the benchmark duration rather than the requests' span.
    """
    missing = [key for key in IDENTITY_KEYS if key not in identity]
    if missing:
        raise ValueError(f"result identity lacks {', '.join(missing)} (needs {IDENTITY_KEYS})")
    for key in ("tp", "concurrency"):
        value = identity[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"result identity: {key} must be an integer >= 1, got {value!r}")
    record: dict[str, Any] = {"kind": RECORD_KIND}
    record |= {key: identity[key] for key in IDENTITY_KEYS}
    record["point"] = {"tp": identity["tp"], "concurrency": identity["concurrency"]}
    record["requests"] = {
        "total": result.total,
        "completed": result.completed,
        "failed": result.failed,
        "error_ratio": result.error_ratio,
    }
    if throughput is not None:
        record["throughput"] = {**throughput, "requests_per_s": result.request_rate}
    else:
        record["throughput"] = {
            "method": "aiperf",
            "output_tokens_per_s": result.output_throughput,
            "output_tokens_per_s_per_gpu": result.output_throughput_per_gpu,
            "requests_per_s": result.request_rate,
            "gpus": result.gpus,
        }
    record["latency_ms"] = {
        "ttft": _percentiles(result.ttft_ms),
        "tpot": _percentiles(result.tpot_ms),
        "e2e": _percentiles(result.e2e_ms),
    }
    record["interactivity_tokens_per_s_per_user"] = result.interactivity
    record["submission_valid"] = result.submission_valid
    record["submission_invalid_reasons"] = list(result.submission_invalid_reasons)
    record["aiperf"] = {
        "version": result.aiperf_version,
        "scenario": result.scenario,
        "export": str(result.export_path),
        "duration_s": result.duration_s,
        "was_cancelled": result.was_cancelled,
        "exit_code": result.exit_code,
        "output_tokens": result.output_tokens,
        "output_tokens_per_s": result.output_throughput,
    }
    record["errors"] = [
        {"code": kind.code, "type": kind.kind, "message": kind.message, "count": kind.count}
        for kind in result.errors
    ]
    if verdict is not None:
        record["verdict"] = vocabulary.of(verdict.passed).value
        record["reasons"] = list(verdict.reasons)
        record["failed_request_threshold"] = verdict.threshold
    return record


def _percentiles(value: Percentiles | None) -> dict[str, float] | None:
    return None if value is None else value.as_json()

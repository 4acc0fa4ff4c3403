"""The result record of one AgentX point (:class:`~pytest_infx.results.records.PointRecord`).

This module only builds the value, so the same record feeds the file, the terminal table and
any later comparison without re-reading aiperf.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_infx.agentic.gate import GateVerdict
from pytest_infx.agentic.results import AgenticResult
from pytest_infx.agentic.results import Percentiles as Measured
from pytest_infx.results import verdict as vocabulary
from pytest_infx.results.records import (
    RECORD_VERSION,
    AiperfRun,
    AiperfThroughput,
    ErrorCount,
    InferencexThroughput,
    Latency,
    Percentiles,
    PointCoordinates,
    PointRecord,
    PointRequests,
    ServerInfo,
)


@dataclass(frozen=True, kw_only=True)
class PointIdentity:
    """Which point a result is of, and where it was measured; ``image`` is None on a CPU
    run, which has a command instead."""

    id: str
    recipe: str
    model: str
    engine: str
    image: str | None
    tp: int
    concurrency: int
    gpu: str
    fingerprint: str
    traces_sha256: str | None
    server: ServerInfo
    variant: str | None = None


def result_record(
    identity: PointIdentity,
    result: AgenticResult,
    *,
    verdict: GateVerdict | None = None,
    throughput: InferencexThroughput | None = None,
    inferencex_result: str | None = None,
) -> PointRecord:
    """``throughput`` is the block computed the InferenceX way from the per-request records
    (``aggregate.headline``); without it the block holds aiperf's own summary figures, whose
    output rate is over the benchmark duration rather than the requests' span.
    ``inferencex_result`` is InferenceX's aggregate file, relative to the results folder."""
    return PointRecord(
        version=RECORD_VERSION,
        id=identity.id,
        recipe=identity.recipe,
        fingerprint=identity.fingerprint,
        server=identity.server,
        model=identity.model,
        engine=identity.engine,
        image=identity.image,
        tp=identity.tp,
        concurrency=identity.concurrency,
        gpu=identity.gpu,
        point=PointCoordinates(
            tp=identity.tp, concurrency=identity.concurrency, variant=identity.variant
        ),
        requests=PointRequests(
            total=result.total,
            completed=result.completed,
            failed=result.failed,
            error_ratio=result.error_ratio,
        ),
        throughput=throughput
        or AiperfThroughput(
            method="aiperf",
            output_tokens_per_s=result.output_throughput,
            output_tokens_per_s_per_gpu=result.output_throughput_per_gpu,
            requests_per_s=result.request_rate,
            gpus=result.gpus,
        ),
        latency_ms=Latency(
            ttft=_percentiles(result.ttft_ms),
            tpot=_percentiles(result.tpot_ms),
            e2e=_percentiles(result.e2e_ms),
        ),
        interactivity_tokens_per_s_per_user=result.interactivity,
        submission_valid=result.submission_valid,
        submission_invalid_reasons=list(result.submission_invalid_reasons),
        aiperf=AiperfRun(
            version=result.aiperf_version,
            scenario=result.scenario,
            export=str(result.export_path),
            duration_s=result.duration_s,
            was_cancelled=result.was_cancelled,
            exit_code=result.exit_code,
            output_tokens=result.output_tokens,
            output_tokens_per_s=result.output_throughput,
        ),
        errors=[
            ErrorCount(code=kind.code, type=kind.kind, message=kind.message, count=kind.count)
            for kind in result.errors
        ],
        verdict=None if verdict is None else vocabulary.of(verdict.passed).value,
        reasons=[] if verdict is None else list(verdict.reasons),
        failed_request_threshold=None if verdict is None else verdict.threshold,
        inferencex_result=inferencex_result,
        traces_sha256=identity.traces_sha256,
    )


def _percentiles(value: Measured | None) -> Percentiles | None:
    return None if value is None else Percentiles(p50=value.p50, p90=value.p90, p99=value.p99)

"""The result record of one AgentX point (:class:`~pytest_infx.results.records.PointRecord`).

This module only builds the value, so the same record feeds the file, the terminal table and
any later comparison without re-reading aiperf.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_infx.agentic.gate import GateVerdict
from pytest_infx.agentic.results import AgenticResult
from pytest_infx.agentic.results import MeasuredPercentiles as Measured
from pytest_infx.results import verdict as vocabulary
from pytest_infx.results.passes import median_figures
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
    ``inferencex_result`` is InferenceX's aggregate file, relative to the results folder.

    A figure aiperf measured as NaN, infinite or negative is left out of the record (None) and
    fails the point with that reason (:func:`unmeasured`): the record is still written, so the
    reviewer sees the rest of the point, but it can never pass, be reused or be a baseline."""
    broken = unmeasured(result)
    passed = (verdict is None or verdict.passed) and not broken
    reasons = ([] if verdict is None else list(verdict.reasons)) + list(broken)
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
            output_tokens_per_s=kept(result.output_throughput),
            output_tokens_per_s_per_gpu=kept(result.output_throughput_per_gpu),
            requests_per_s=kept(result.request_rate),
            gpus=result.gpus,
        ),
        latency_ms=Latency(
            ttft=_percentiles(result.ttft_ms),
            tpot=_percentiles(result.tpot_ms),
            e2e=_percentiles(result.e2e_ms),
        ),
        interactivity_tokens_per_s_per_user=kept(result.interactivity),
        submission_valid=result.submission_valid,
        submission_invalid_reasons=list(result.submission_invalid_reasons),
        aiperf=AiperfRun(
            version=result.aiperf_version,
            scenario=result.scenario,
            export=str(result.export_path),
            duration_s=kept(result.duration_s),
            was_cancelled=result.was_cancelled,
            exit_code=result.exit_code,
            output_tokens=result.output_tokens,
            output_tokens_per_s=kept(result.output_throughput),
        ),
        errors=[
            ErrorCount(code=kind.code, type=kind.kind, message=kind.message, count=kind.count)
            for kind in result.errors
        ],
        verdict=None if verdict is None and not broken else vocabulary.of(passed).value,
        reasons=reasons,
        failed_request_threshold=None if verdict is None else verdict.threshold,
        inferencex_result=inferencex_result,
        traces_sha256=identity.traces_sha256,
    )


def unmeasured(result: AgenticResult) -> tuple[str, ...]:
    """Why each figure aiperf gave is no measurement (NaN, infinite or negative), naming its
    export; empty when every figure is one."""
    figures: dict[str, float | None] = {
        "output_token_throughput": result.output_throughput,
        "request_throughput": result.request_rate,
        "benchmark_duration": result.duration_s,
    }
    for name, block in (
        ("time_to_first_token", result.ttft_ms),
        ("inter_token_latency", result.tpot_ms),
        ("request_latency", result.e2e_ms),
    ):
        if block is not None:
            figures.update({f"{name}.p50": block.p50, f"{name}.p90": block.p90})
            figures[f"{name}.p99"] = block.p99
    return tuple(
        f"aiperf measured {name} = {value!r} in {result.export_path}, not a finite figure of at "
        "least 0; the point has no such measurement"
        for name, value in figures.items()
        if value is not None and kept(value) is None
    )


def kept(value: float | None) -> float | None:
    """A figure the record can hold; None for one that is no measurement."""
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def _percentiles(value: Measured | None) -> Percentiles | None:
    """None where one of the three is no measurement (:func:`unmeasured` gives the reason)."""
    if value is None or any(kept(v) is None for v in (value.p50, value.p90, value.p99)):
        return None
    return Percentiles(p50=value.p50, p90=value.p90, p99=value.p99)


def with_passes(record: PointRecord, passes: Sequence[Mapping[str, float]]) -> PointRecord:
    """The record of a point measured more than once: each pass's figures (under the history's
    names) and their medians, which the history stores and the baseline gate judges; the rest
    of the record, and InferenceX's aggregate, are the median pass's."""
    update = {"passes": [dict(each) for each in passes], "median": median_figures(passes)}
    return record.model_copy(update=update)

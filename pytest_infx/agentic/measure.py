"""An AgentX point measured against its server: replay the traces through aiperf (as many
passes as its repeats), build InferenceX's aggregate of the pass it keeps, write it, and return
the record with what fails it beyond its own gate.

The record is returned even when aiperf's files cannot be read or aiperf exits with an error
after writing them, so the point still leaves its numbers for the dashboard and the reviewer;
those faults fail it as problems, which its history row stores too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from pytest_infx.agentic.aggregate import RECORDS_NAME, build_aggregate, headline, load_records
from pytest_infx.agentic.gate import check_requests
from pytest_infx.agentic.record import (
    PointIdentity,
    kept,
    result_record,
    unmeasured,
    with_passes,
)
from pytest_infx.agentic.results import AgenticResult, ExportError
from pytest_infx.agentic.runner import CONSOLE_LOG_NAME, AgenticRun, AgenticRunError, run_aiperf
from pytest_infx.agentic.traces import default_traces_path, load_traces
from pytest_infx.envs.aiperf import ensure_aiperf
from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.launch import ServerHandle
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import Agentic
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.measure import MeasureContext, Measurement, PointFailed
from pytest_infx.results.passes import median_index
from pytest_infx.results.records import (
    InferencexThroughput,
    PointRecord,
    Record,
    ServerInfo,
)

BUILTIN_TRACES = "builtin"


def traces_sha256(point: Point) -> str | None:
    """The digest of the shipped traces a point replays; a hub corpus is pinned by its name,
    which the point's fingerprint covers; a SPEED-Bench cell replays none."""
    agentic = point.agentic
    if agentic is None or agentic.traces != BUILTIN_TRACES:
        return None
    return load_traces(default_traces_path()).sha256


def agentic_of(point: Point) -> Agentic:
    """The AgentX settings of an AgentX point."""
    return point.block_as(Agentic, "an AgentX point")


def aiperf_run(
    point: Point, server: ServerHandle, context: MeasureContext, shape: ConfigIdentity
) -> AgenticRun:
    agentic = agentic_of(point)
    builtin = agentic.traces == BUILTIN_TRACES
    ratio = agentic.trajectory_start_ratio
    return AgenticRun(
        aiperf=ensure_aiperf(progress=context.say).aiperf,
        url=server.base_url,
        model=point.recipe.model.served_name,
        tokenizer=context.model_dir(point),
        concurrency=point.concurrency,
        duration_s=agentic.duration,
        artifact_dir=context.layout.artifacts(point.id),
        public_dataset=None if builtin else agentic.traces,
        traces=default_traces_path() if builtin else None,
        seed=agentic.seed,
        gpus=shape.gpus,
        trajectory_start_ratio=(ratio[0], ratio[1]) if ratio else None,
        trace_idle_gap_cap_s=agentic.trace_idle_gap_cap,
        warmup_grace_period_s=agentic.warmup_grace_period,
        failed_request_threshold=agentic.failed_request_threshold,
        max_context_length=point.recipe.model.max_model_len,
        request_count=agentic.request_count,
        num_dataset_entries=None if builtin else agentic.num_dataset_entries,
        apply_chat_template=agentic.chat_template,
    )


def aggregate(
    run: AgenticRun, result: AgenticResult, shape: ConfigIdentity
) -> tuple[dict[str, object], InferencexThroughput | None]:
    """InferenceX's aggregate of one aiperf pass and our throughput block computed from it;
    ExportError when aiperf's files cannot be read."""
    found = load_records(run.artifact_dir / RECORDS_NAME)
    export = json.loads(result.export_path.read_text(encoding="utf-8"))
    agg = build_aggregate(found, export, shape)
    block = headline(agg, num_gpus=shape.gpus, requests_per_s=kept(result.request_rate))
    return agg, block


def passes(base: AgenticRun, repeats: int) -> list[AgenticRun]:
    """One aiperf run per pass; a point measured more than once keeps each pass's files in a
    folder of its own under the point's."""
    if repeats == 1:
        return [base]
    folder = base.artifact_dir
    return [replace(base, artifact_dir=folder / f"pass-{k}") for k in range(1, repeats + 1)]


def replay(
    point: Point, server: ServerHandle, context: MeasureContext, runs: list[AgenticRun]
) -> list[AgenticResult]:
    agentic = agentic_of(point)
    results: list[AgenticResult] = []
    with context.measuring(server, point):
        for run in runs:
            console = str(run.artifact_dir / CONSOLE_LOG_NAME)
            # aiperf's console (hundreds of lines, warnings on passing points) stays in its file
            context.say(f"aiperf: {point.id}: its output goes to {console}")
            try:
                with context.running(point, agentic.duration, console):
                    results.append(run_aiperf(run))
            except AgenticRunError as exc:
                raise PointFailed(f"aiperf did not finish for {point.id}:\n{exc}") from None
    return results


def identity(point: Point, server: ServerHandle) -> PointIdentity:
    engine = point.recipe.engine
    return PointIdentity(
        id=point.id,
        recipe=point.recipe_key,
        model=point.recipe.model.hub_id,
        engine=f"{engine.name} {engine.version or ''}".strip(),
        image=engine.image,
        tp=point.tp,
        concurrency=point.concurrency,
        gpu=point.runner,
        fingerprint=point.fingerprint,
        traces_sha256=traces_sha256(point),
        server=ServerInfo.of(server),
        variant=point.variant,
    )


def measure(
    point: Point,
    server: ServerHandle,
    context: MeasureContext,
    metrics: Callable[[Record], dict[str, float]],
) -> Measurement:
    """The point's record from the pass it keeps (the median of ``metrics``' output rate, or
    the first that failed), with InferenceX's aggregate written beside it; what fails it
    beyond its own gate (aiperf's files unreadable, a figure aiperf could not measure, aiperf's
    exit code) comes back as problems, and the item's message is the first of them."""
    agentic = agentic_of(point)
    shape = context.identity(point)
    repeats = agentic.repeats or context.default_repeats
    runs = passes(aiperf_run(point, server, context, shape), repeats)
    results = replay(point, server, context, runs)
    who = identity(point, server)
    measured: list[tuple[dict[str, object] | None, str | None]] = []
    verdicts = [check_requests(r, threshold=agentic.failed_request_threshold) for r in results]
    records: list[PointRecord] = []
    for run, result, verdict in zip(runs, results, verdicts, strict=True):
        try:
            found, throughput = aggregate(run, result, shape)
            measured.append((found, None))
        except ExportError as exc:
            throughput = None
            measured.append((None, str(exc)))
        records.append(result_record(who, result, verdict=verdict, throughput=throughput))
    figures = [metrics(each) for each in records]
    chosen = median_index(figures, "output_tput_per_gpu")
    failing = (
        i
        for i, (record, result) in enumerate(zip(records, results, strict=True))
        if not record.passed or measured[i][1] is not None or result.exit_code != 0
    )
    chosen = next(failing, chosen)
    run, result, record = runs[chosen], results[chosen], records[chosen]
    console = str(run.artifact_dir / CONSOLE_LOG_NAME)
    verdict = verdicts[chosen]
    agg, records_error = measured[chosen]
    if agg is not None:
        layout = context.layout
        path = layout.inferencex(shape.file_name())
        atomic_write_json(path, agg)
        record = record.model_copy(update={"inferencex_result": layout.relative(path)})
    if repeats > 1:
        record = with_passes(record, figures)
    broken = unmeasured(result)
    problems = ([] if records_error is None else [records_error]) + list(broken)
    if result.exit_code != 0:
        problems.append(
            f"aiperf exited with {result.exit_code} after writing its results; see {console}"
        )
    failures = [
        *([] if verdict.passed else [verdict.message]),
        *(["; ".join(broken)] if broken else []),
        *([] if records_error is None else [records_error]),
        *(
            [
                f"aiperf exited with {result.exit_code} after writing its results; its log "
                f"{console} ends:\n" + "\n".join(result.console_tail)
            ]
            if result.exit_code != 0
            else []
        ),
    ]
    return Measurement(record, tuple(problems), failures[0] if failures else None)


def properties(record: Record) -> list[tuple[str, object]]:
    """The junit properties of an AgentX record: its request counts and throughput."""
    if not isinstance(record, PointRecord):
        raise TypeError(f"{record.id} is a {record.kind} record, not an AgentX point's")
    found: list[tuple[str, object]] = [
        ("completed", record.requests.completed),
        ("failed", record.requests.failed),
    ]
    throughput = record.throughput
    found.append(("output_tokens_per_s_per_gpu", throughput.output_tokens_per_s_per_gpu))
    if isinstance(throughput, InferencexThroughput):
        found.append(("total_tokens_per_s_per_gpu", throughput.total_tokens_per_s_per_gpu))
    return found

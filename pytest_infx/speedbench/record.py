"""The result record of a SPEED-Bench cell (:class:`~pytest_infx.results.records.CellRecord`),
built from the point, its server and the cell's outcome (the AgentX record is built the same way
in :mod:`pytest_infx.agentic.record`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_infx.results import verdict
from pytest_infx.results.passes import median_figures
from pytest_infx.results.records import (
    RECORD_VERSION,
    CellPoint,
    CellRecord,
    CellRequests,
    ClientInfo,
    CounterChange,
    Counters,
    CounterValues,
    DatasetInfo,
    EngineInfo,
    GoldenSummary,
    ServerInfo,
)

if TYPE_CHECKING:
    from pytest_infx.golden.compare import Comparison
    from pytest_infx.launch import ServerHandle
    from pytest_infx.recipes.points import Point
    from pytest_infx.speedbench.cell import CellOutcome
    from pytest_infx.speedbench.metrics import SpecCounters


def engine_info(point: Point) -> EngineInfo:
    engine = point.recipe.engine
    if engine.image:
        return EngineInfo(name=engine.name, version=engine.version, image=engine.image)
    if engine.embedded:
        return EngineInfo(name=engine.name, version=engine.version, embedded=engine.embedded)
    return EngineInfo(name=engine.name, version=engine.version, command=list(engine.command or []))


def _counters(c: SpecCounters) -> CounterValues:
    return CounterValues(
        drafts=c.drafts,
        draft_tokens=c.draft_tokens,
        accepted=c.accepted,
        accepted_per_pos=list(c.accepted_per_pos),
        generation_tokens=c.generation_tokens,
    )


def cell_record(
    point: Point,
    server: ServerHandle,
    outcome: CellOutcome,
    engine: EngineInfo,
    golden: GoldenSummary | None,
) -> CellRecord:
    records = outcome.result.records
    summary = outcome.summary
    empty = sum(1 for r in records if r.ok and not (r.content or r.reasoning))
    reasons = [str(r) for r in outcome.reasons]
    if golden is not None and not golden.ok:
        reasons += [f"golden: {line}" for line in golden.lines]
    assert point.draft_length is not None and point.thinking is not None
    return CellRecord(
        version=RECORD_VERSION,
        id=point.id,
        recipe=point.recipe_key,
        fingerprint=point.fingerprint,
        point=CellPoint(
            draft_length=point.draft_length,
            thinking=point.thinking,
            tp=point.tp,
            concurrency=point.concurrency,
        ),
        engine=engine,
        server=ServerInfo.of(server),
        dataset=DatasetInfo(
            name=outcome.dataset.name,
            path=str(outcome.dataset.path),
            category=outcome.dataset.category,
            sha256=outcome.dataset.sha256,
            n=len(outcome.dataset.rows),
        ),
        client=ClientInfo.model_validate(
            {
                "concurrency": outcome.settings.concurrency,
                "max_tokens": outcome.settings.max_tokens,
                "chat_template_kwargs": dict(outcome.settings.chat_template_kwargs),
            }
        ),
        requests=CellRequests(
            total=len(records),
            completed=outcome.result.completed,
            failed=outcome.result.failed,
            empty=empty,
            completion_tokens=sum(r.completion_tokens or 0 for r in records),
            wall_s=round(outcome.result.wall_s, 3),
        ),
        rendered_prompt_tail=outcome.rendered_prompt[-200:] if outcome.rendered_prompt else None,
        al=outcome.al,
        al_raw=summary.al,
        al_per_position=list(summary.per_position),
        acceptance_rate=summary.acceptance_rate,
        al_request_weighted=summary.request_weighted,
        al_token_weighted=summary.token_weighted,
        al_standard_error=summary.standard_error,
        counters=Counters(
            before=_counters(outcome.before),
            after=_counters(outcome.after),
            delta=CounterChange(
                drafts=outcome.counters.drafts,
                accepted=outcome.counters.accepted,
                draft_tokens=outcome.counters.draft_tokens,
                decreased=list(outcome.counters.decreased),
            ),
        ),
        golden=golden,
        verdict=verdict.of(not reasons).value,
        reasons=reasons,
    )


def golden_summary(curve: str, comparison: Comparison | None, *, passed: bool) -> GoldenSummary:
    """``passed`` is the gate's answer: under ``--snapshot-update`` a comparison that found a
    missing or drifted cell passes, because the cell was just recorded."""
    if comparison is None:
        return GoldenSummary(curve=curve, ok=True, recorded=True)
    return GoldenSummary(
        curve=curve,
        ok=passed,
        recorded=passed and not comparison.ok,
        checked=comparison.checked,
        drifted=len(comparison.drifted),
        largest_delta=comparison.largest_delta,
        tolerance=comparison.tolerance,
        lines=[] if passed else comparison.lines(),
    )


def with_passes(record: CellRecord, passes: Sequence[Mapping[str, float]]) -> CellRecord:
    """The record of a cell measured more than once: each pass's AL and throughput figures and
    their medians; its AL is the median AL, which the golden comparison, resume and the history
    use, while the rest of the record is the median pass's (the lower middle of an even count).
    A cell whose reported pass failed its checks keeps no AL."""
    median = median_figures(passes)
    al = None if record.al is None else median.get("al", record.al)
    update = {"passes": [dict(each) for each in passes], "median": median, "al": al}
    return record.model_copy(update=update)

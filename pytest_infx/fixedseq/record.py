"""The result record of one fixed-seq-len point
(:class:`~pytest_infx.results.records.FixedRecord`), built from what the point measured.

It lives with the kind, as the other kinds' records do, so the pytest side only hands over
values: the point, its identity, its server, its prompts and what the checks found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_infx.baseline_tolerance import METRICS
from pytest_infx.fixedseq.checks import Checked
from pytest_infx.fixedseq.prompts import RandomPrompts
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import FixedSeqLen
from pytest_infx.results import verdict
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.passes import median_figures, median_index
from pytest_infx.results.records import (
    RECORD_VERSION,
    EngineInfo,
    FixedPoint,
    FixedPrompts,
    FixedRecord,
    FixedRequests,
    ServerInfo,
)


def block_of(point: Point) -> FixedSeqLen:
    """The fixed-seq-len settings of a point; another kind's point is a programming error."""
    block = point.fixed_seq_len
    if block is None:
        raise TypeError(f"{point.id} is not a fixed-seq-len point")
    return block


def fixed_record(
    point: Point,
    *,
    identity: ConfigIdentity,
    server: ServerInfo,
    prompts: RandomPrompts,
    duration_s: float,
    checked: Checked,
    agg: Mapping[str, object],
    raw_result: str,
    inferencex_result: str,
) -> FixedRecord:
    """The record of a point measured once; ``agg`` is its processed file, ``raw_result`` and
    ``inferencex_result`` the raw and processed files' paths relative to the results folder."""
    block = block_of(point)
    assert point.isl is not None and point.osl is not None
    engine = point.recipe.engine
    requests = prompts.requests
    return FixedRecord(
        version=RECORD_VERSION,
        id=point.id,
        recipe=point.recipe_key,
        fingerprint=point.fingerprint,
        server=server,
        verdict=verdict.of(checked.passed).value,
        reasons=list(checked.problems),
        config=identity,
        model=point.recipe.model.hub_id,
        engine=EngineInfo(
            name=engine.name,
            version=engine.version,
            image=engine.image,
            embedded=engine.embedded,
            command=list(engine.command) if engine.command else None,
        ),
        gpu=point.runner,
        point=FixedPoint(
            tp=point.tp,
            concurrency=point.concurrency,
            isl=point.isl,
            osl=point.osl,
            variant=point.variant,
        ),
        prompts=FixedPrompts(
            sha256=prompts.sha256,
            seed=block.seed,
            random_range_ratio=block.random_range_ratio,
            mean_input_len=sum(r.prompt_len for r in requests) / max(1, len(requests)),
            mean_output_len=sum(r.output_len for r in requests) / max(1, len(requests)),
        ),
        requests=FixedRequests(
            sent=checked.sent,
            completed=checked.completed,
            failed=checked.failed,
            empty=checked.empty,
            short=checked.short,
            warmups=block.warmups_per_concurrency * point.concurrency,
        ),
        duration_s=duration_s,
        figures=figures(agg),
        errors=list(checked.errors),
        raw_result=raw_result,
        inferencex_result=inferencex_result,
    )


def with_passes(record: FixedRecord, aggs: Sequence[Mapping[str, object]]) -> FixedRecord:
    """The record of a point measured more than once: each pass's figures, and their medians
    as its figures."""
    passes = [figures(each) for each in aggs]
    return record.model_copy(update={"figures": median_figures(passes), "passes": passes})


def figures(agg: Mapping[str, object]) -> dict[str, float]:
    """The processed file's figures the history and the gate know by name."""
    return {
        name: float(value)
        for name, value in agg.items()
        if name in METRICS and isinstance(value, int | float) and not isinstance(value, bool)
    }


def median_pass(aggs: Sequence[Mapping[str, object]]) -> int:
    """The pass whose total throughput per GPU is the median, whose raw and processed files
    stand for the point."""
    return median_index([figures(each) for each in aggs], "tput_per_gpu")

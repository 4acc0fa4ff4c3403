"""A fixed-seq-len point measured against its server: make the random prompts, send them at
the point's concurrency (as many passes as its repeats), write the raw and processed files in
InferenceX's shapes and return the record, whose verdict says whether the requests passed
their checks.

The files are written before the record is judged, so a point that fails its checks still
leaves its numbers and its errors for the reviewer. The run imports this module only when a
fixed-seq-len point runs, since the tokenizer and NumPy are no part of collection.
"""

from __future__ import annotations

from pathlib import Path

from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.fixedseq.chat import ChatTemplateError, chat_for
from pytest_infx.fixedseq.checks import check
from pytest_infx.fixedseq.client import FixedClientConfig, run_requests_sync
from pytest_infx.fixedseq.prompts import HubTokenizer, RandomPrompts, TokenizerError, random_prompts
from pytest_infx.fixedseq.record import block_of, fixed_record, median_pass, with_passes
from pytest_infx.fixedseq.results import RunInfo, power_report, processed, raw_result
from pytest_infx.launch import ServerHandle
from pytest_infx.recipes.points import Point
from pytest_infx.results.measure import MeasureContext, PointFailed
from pytest_infx.results.records import FixedRecord, Record, ServerInfo


def prompts(point: Point, model_dir: str) -> RandomPrompts:
    """The point's prompts, from the served checkpoint's tokenizer (and chat template)."""
    block = block_of(point)
    assert point.isl is not None and point.osl is not None
    folder = Path(model_dir)
    try:
        tokenizer = HubTokenizer.load(folder)
        chat = chat_for(block.chat_template, folder)
        return random_prompts(
            tokenizer,
            input_len=point.isl,
            output_len=point.osl,
            num_prompts=block.prompts_per_concurrency * point.concurrency,
            range_ratio=block.random_range_ratio,
            seed=block.seed,
            workers=block.prompt_workers,
            chat=chat,
        )
    except (TokenizerError, ChatTemplateError, ValueError) as exc:
        raise PointFailed(f"{point.id}: {exc}") from None


def measure(point: Point, server: ServerHandle, context: MeasureContext) -> FixedRecord:
    block = block_of(point)
    recipe = point.recipe
    made = prompts(point, context.model_dir(point))
    requests = made.requests
    config = FixedClientConfig(
        base_url=server.base_url,
        model=recipe.model.served_name,
        concurrency=point.concurrency,
        warmups=block.warmups_per_concurrency * point.concurrency,
        total_timeout_s=block.request_timeout,
        connections=block.connections,
    )
    repeats = block.repeats or context.default_repeats
    outcomes = []
    with context.measuring(server, point), context.counting(point, len(requests) * repeats):
        for _ in range(repeats):
            outcomes.append(
                run_requests_sync(
                    config,
                    requests,
                    on_done=lambda o: context.request_done(o.output_tokens, ok=o.success),
                )
            )
    identity = context.identity(point)
    info = RunInfo(
        model_id=recipe.model.hub_id,
        tokenizer_id=recipe.model.hub_id,
        num_prompts=len(requests),
        max_concurrency=point.concurrency,
        backend=identity.framework,
    )
    raws = [raw_result(info, requests, outcome) for outcome in outcomes]
    aggs = [processed(identity, raw) for raw in raws]
    chosen = median_pass(aggs)
    outcome, raw, agg = outcomes[chosen], raws[chosen], aggs[chosen]
    layout = context.layout
    raw_path = layout.fixed_raw(identity.file_name())
    agg_path = layout.fixed_processed(identity.file_name())
    atomic_write_json(raw_path, raw)
    atomic_write_json(agg_path, agg)
    power_path = raw_path.with_name(f"power_validation_{raw_path.name}")
    atomic_write_json(power_path, power_report(raw, raw_path.name, identity.gpus))
    checks = [check(requests, each.outputs) for each in outcomes]
    checked = next((each for each in checks if not each.passed), checks[chosen])
    record = fixed_record(
        point,
        identity=identity,
        server=ServerInfo.of(server),
        prompts=made,
        duration_s=outcome.duration_s,
        checked=checked,
        agg=agg,
        raw_result=layout.relative(raw_path),
        inferencex_result=layout.relative(agg_path),
    )
    return with_passes(record, aggs) if repeats > 1 else record


def properties(record: Record) -> list[tuple[str, object]]:
    """The junit properties of a fixed-seq-len record: its request counts and headline
    figures."""
    if not isinstance(record, FixedRecord):
        raise TypeError(f"{record.id} is a {record.kind} record, not a fixed-seq-len point's")
    found: list[tuple[str, object]] = [
        ("completed", record.requests.completed),
        ("failed", record.requests.failed),
    ]
    for name in ("tput_per_gpu", "output_tput_per_gpu", "median_ttft", "median_tpot"):
        if name in record.figures:
            found.append((name, record.figures[name]))
    return found

"""The result record of a SPEED-Bench cell, as its result file stores it: the point, the engine,
the server, the dataset, the client settings, the requests, every AL estimate, the counters, the
golden comparison and the verdict (the AgentX record is built the same way in
:mod:`pytest_infx.agentic.record`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_infx.results import verdict

if TYPE_CHECKING:
    from pytest_infx.golden.compare import Comparison
    from pytest_infx.launch import ServerHandle
    from pytest_infx.recipes.points import Point
    from pytest_infx.speedbench.cell import CellOutcome
    from pytest_infx.speedbench.metrics import SpecCounters


def engine_info(point: Point) -> dict[str, Any]:
    engine = point.recipe.engine
    info: dict[str, Any] = {"name": engine.name, "version": engine.version}
    if engine.image:
        info["image"] = engine.image
    elif engine.embedded:
        info["embedded"] = engine.embedded
    else:
        info["command"] = list(engine.command or [])
    return info


def _counters(c: SpecCounters) -> dict[str, Any]:
    return {
        "drafts": c.drafts,
        "draft_tokens": c.draft_tokens,
        "accepted": c.accepted,
        "accepted_per_pos": list(c.accepted_per_pos),
        "generation_tokens": c.generation_tokens,
    }


def cell_record(
    point: Point,
    server: ServerHandle,
    outcome: CellOutcome,
    engine: dict[str, Any],
    golden: dict[str, Any] | None,
) -> dict[str, Any]:
    records = outcome.result.records
    summary = outcome.summary
    empty = sum(1 for r in records if r.ok and not (r.content or r.reasoning))
    reasons = [str(r) for r in outcome.reasons]
    if golden is not None and not golden["ok"]:
        reasons += [f"golden: {line}" for line in golden["lines"]]
    return {
        "id": point.id,
        "recipe": point.recipe_key,
        "kind": point.kind,
        "fingerprint": point.fingerprint,
        "point": {
            "draft_length": point.draft_length,
            "thinking": point.thinking,
            "tp": point.tp,
            "concurrency": point.concurrency,
        },
        "engine": engine,
        "server": {
            "argv": list(server.argv),
            "port": server.port,
            "log": str(server.log_path),
            "base_url": server.base_url,
            "port_note": server.port_note,
        },
        "dataset": {
            "name": outcome.dataset.name,
            "path": str(outcome.dataset.path),
            "category": outcome.dataset.category,
            "sha256": outcome.dataset.sha256,
            "n": len(outcome.dataset.rows),
        },
        "client": {
            "concurrency": outcome.settings.concurrency,
            "max_tokens": outcome.settings.max_tokens,
            "chat_template_kwargs": dict(outcome.settings.chat_template_kwargs),
        },
        "requests": {
            "total": len(records),
            "completed": outcome.result.completed,
            "failed": outcome.result.failed,
            "empty": empty,
            "completion_tokens": sum(r.completion_tokens or 0 for r in records),
            "wall_s": round(outcome.result.wall_s, 3),
        },
        "rendered_prompt_tail": outcome.rendered_prompt[-200:] if outcome.rendered_prompt else None,
        "al": outcome.al,
        "al_raw": summary.al,
        "al_per_position": list(summary.per_position),
        "acceptance_rate": summary.acceptance_rate,
        "al_request_weighted": summary.request_weighted,
        "al_token_weighted": summary.token_weighted,
        "al_standard_error": summary.standard_error,
        "counters": {
            "before": _counters(outcome.before),
            "after": _counters(outcome.after),
            "delta": {
                "drafts": outcome.counters.drafts,
                "accepted": outcome.counters.accepted,
                "draft_tokens": outcome.counters.draft_tokens,
                "decreased": list(outcome.counters.decreased),
            },
        },
        "golden": golden,
        "verdict": verdict.of(not reasons).value,
        "reasons": reasons,
    }


def golden_summary(curve: str, comparison: Comparison | None, *, passed: bool) -> dict[str, Any]:
    """``passed`` is the gate's answer: under ``--snapshot-update`` a comparison that found a
    missing or drifted cell passes, because the cell was just recorded."""
    if comparison is None:
        return {"curve": curve, "ok": True, "recorded": True, "lines": []}
    return {
        "curve": curve,
        "ok": passed,
        "recorded": passed and not comparison.ok,
        "checked": comparison.checked,
        "drifted": len(comparison.drifted),
        "largest_delta": comparison.largest_delta,
        "tolerance": comparison.tolerance,
        "lines": [] if passed else comparison.lines(),
    }

"""The pytest side of a SPEED-Bench cell: run it, keep its results, gate it.

Results are written before any assertion, so a failed cell still leaves its record (with the
reasons) for the reviewer; the golden comparison runs only for a cell that passed its checks,
because a failed cell has no trustworthy AL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

import pytest_infx.plugin.options as options
from pytest_infx.golden.compare import Comparison
from pytest_infx.golden.curve import Curve, Provenance
from pytest_infx.golden.extension import GoldenDriftError, assert_curve
from pytest_infx.launch import ServerDiedError, ServerHandle
from pytest_infx.plugin.summary import CELL_PROPERTY
from pytest_infx.recipes.points import Point
from pytest_infx.results import cells, verdict
from pytest_infx.speedbench.cell import CellOutcome, CellSettings, run_cell
from pytest_infx.speedbench.client import Sampling
from pytest_infx.speedbench.metrics import ScrapeError, SpecCounters

if TYPE_CHECKING:
    from pytest_infx.plugin.run import Run

REBASELINE_OPTION = "infx_rebaseline"


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


def _golden_summary(curve: str, comparison: Comparison | None, *, passed: bool) -> dict[str, Any]:
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


@dataclass
class SpeedbenchCell:
    point: Point
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest
    snapshot: Any

    def died(self, wait_s: float = 5.0) -> str | None:
        """Why the server is gone, if it is: its guard exits a moment after the engine."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.run_ctx.pool.check(self.server)
            except ServerDiedError as exc:
                return str(exc)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.2)

    def settings(self) -> CellSettings:
        bench = self.point.recipe.speedbench
        assert bench is not None and self.point.thinking and self.point.draft_length
        s = bench.sampling
        return CellSettings(
            base_url=self.server.base_url,
            model=self.point.recipe.model.served_name,
            engine=self.point.recipe.engine.name,
            draft_length=self.point.draft_length,
            thinking=self.point.thinking == "thinking_on",
            chat_template_kwargs=bench.thinking_modes[self.point.thinking],
            max_tokens=bench.output_len,
            concurrency=bench.concurrency,
            sampling=Sampling(
                temperature=s.temperature,
                top_p=s.top_p,
                top_k=s.top_k,
                seed=s.seed,
                presence_penalty=s.presence_penalty,
            ),
            request_timeout_s=bench.request_timeout,
        )

    def run(self) -> None:
        __tracebackhide__ = True
        point = self.point
        bench = point.recipe.speedbench
        assert bench is not None and point.thinking is not None and point.draft_length
        dataset = self.run_ctx.datasets.get(point)
        tracker = self.run_ctx.progress
        try:
            with tracker.doing("cell", point.id, total=len(dataset.rows)):
                outcome = run_cell(
                    self.settings(),
                    dataset,
                    on_done=lambda r: tracker.request_done(r.completion_tokens, ok=r.ok),
                )
        except ScrapeError as exc:
            why = self.died() or f"server log: {self.server.log_path}"
            message = f"metrics scrape failed: {exc}\n{why}"
            raise pytest.fail.Exception(message, pytrace=False) from None
        engine = engine_info(point)
        record = cell_record(point, self.server, outcome, engine, None)
        header = cells.provenance(point, record["dataset"], engine)
        drift: GoldenDriftError | None = None
        if outcome.al is not None:
            drift, golden = gate(
                point,
                outcome.al,
                outcome.summary.standard_error,
                header,
                self.snapshot,
                self.request,
            )
            record = cell_record(point, self.server, outcome, engine, golden)
        self.run_ctx.keep(record)
        cells.write_matrix(self.run_ctx.layout, point, header)
        attach(self.request.node, point, record)
        if outcome.reasons:
            pytest.fail(
                f"{point.id} failed its checks:\n"
                + "\n".join(f"  - {r}" for r in outcome.reasons)
                + f"\nserver log: {self.server.log_path}",
                pytrace=False,
            )
        if drift is not None:
            raise pytest.fail.Exception(str(drift), pytrace=False) from None


def gate(
    point: Point,
    al: float,
    standard_error: float | None,
    header: Provenance,
    snapshot: Any,
    request: pytest.FixtureRequest,
) -> tuple[GoldenDriftError | None, dict[str, Any]]:
    """Compare one cell's AL with its golden curve; the drift (raised by the caller after the
    results are written) and the summary that goes into the result file and the tables."""
    bench = point.recipe.speedbench
    assert bench is not None and point.thinking is not None and point.draft_length
    measured = Curve(
        name=bench.golden,
        model_key=cells.model_key(point),
        modes={point.thinking: {point.draft_length: al}},
        header=header,
    )
    comparison: Comparison | None = None
    drift: GoldenDriftError | None = None
    try:
        comparison = assert_curve(
            snapshot,
            measured,
            tolerance=bench.tolerance,
            stderr={(point.thinking, point.draft_length): standard_error}
            if standard_error
            else None,
            partial=True,
            rebaseline=bool(request.config.getoption(REBASELINE_OPTION, False)),
            folder=options.settings(request.config).golden,
        )
    except GoldenDriftError as exc:
        drift, comparison = exc, exc.comparison
    return drift, _golden_summary(bench.golden, comparison, passed=drift is None)


def attach(node: pytest.Item, point: Point, record: dict[str, Any]) -> None:
    """The junit properties and the cell the end-of-run tables are built from."""
    for name in ("al", "al_token_weighted", "al_request_weighted", "al_standard_error"):
        node.user_properties.append((name, record[name]))
    requests = record["requests"]
    node.user_properties.append(("requests", f"{requests['completed']}/{requests['total']}"))
    node.user_properties.append(
        (
            CELL_PROPERTY,
            {
                "recipe": point.recipe_key,
                "k": point.draft_length,
                "thinking": point.thinking,
                "al": record["al"],
                "golden": record["golden"],
                "completed": requests["completed"],
                "total": requests["total"],
                "verdict": record["verdict"],
            },
        )
    )

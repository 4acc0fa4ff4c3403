"""One SPEED-Bench cell, end to end against a live server.

Order matters: the rendered prompt is checked first (it generates nothing), counters are
scraped right before and right after the pass so the window holds this cell's traffic (an
engine that queues per-iteration stats is read throughout the pass instead), and
every check runs on what the server reported rather than on what the recipe asked for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pytest_infx.engines.base import RenderError
from pytest_infx.engines.registry import EngineRegistry, installed
from pytest_infx.speedbench import al as al_mod
from pytest_infx.speedbench import checks
from pytest_infx.speedbench.client import (
    ClientConfig,
    PassResult,
    RequestRecord,
    RequestSampling,
    Timeouts,
    run_pass,
)
from pytest_infx.speedbench.dataset import Dataset
from pytest_infx.speedbench.drain import IterationDrain
from pytest_infx.speedbench.metrics import (
    CounterDelta,
    ScrapeError,
    ScrapeWindow,
    SpecCounters,
    delta,
)


@dataclass(frozen=True)
class CellSettings:
    """What the client sends for one cell (all from the recipe point)."""

    base_url: str
    model: str
    engine: str
    draft_length: int
    thinking: bool
    chat_template_kwargs: Mapping[str, object]
    max_tokens: int
    concurrency: int
    sampling: RequestSampling
    request_timeout_s: float
    engines: EngineRegistry = field(default_factory=installed, compare=False, repr=False)
    """The adapters the cell asks for its engine's fields, counters and figures."""


@dataclass(frozen=True)
class CellOutcome:
    settings: CellSettings
    dataset: Dataset
    rendered_prompt: str | None
    render_error: str | None
    before: SpecCounters
    after: SpecCounters
    counters: CounterDelta
    result: PassResult
    summary: al_mod.ALSummary
    reasons: tuple[checks.Reason, ...]

    @property
    def al(self) -> float | None:
        """The cell's AL, or None when any check failed: a failed cell has no trustworthy AL."""
        return None if self.reasons else self.summary.rounded


OnDone = Callable[[RequestRecord], None]


async def _run(settings: CellSettings, dataset: Dataset, on_done: OnDone | None) -> CellOutcome:
    adapter = settings.engines.adapters.get(settings.engine)
    config = ClientConfig(
        base_url=settings.base_url,
        model=settings.model,
        max_tokens=settings.max_tokens,
        concurrency=settings.concurrency,
        sampling=settings.sampling,
        chat_template_kwargs=dict(settings.chat_template_kwargs),
        timeouts=Timeouts(total_s=settings.request_timeout_s),
        extra_body=dict(adapter.request_fields()) if adapter is not None else None,
        spec_reader=adapter.request_spec if adapter is not None else settings.engines.request_spec,
    )
    engine = settings.engine if adapter is not None else None
    rendered: str | None = None
    render_error: str | None = None
    if adapter is not None:
        try:
            rendered = await adapter.rendered_prompt(
                settings.base_url,
                model=settings.model,
                messages=dataset.rows[0].messages_json(),
                chat_template_kwargs=settings.chat_template_kwargs,
            )
        except RenderError as exc:
            render_error = str(exc)
    window = (
        IterationDrain(settings.base_url, adapter)
        if adapter is not None and adapter.iteration_stats
        else ScrapeWindow(settings.base_url, engine, settings.engines)
    )
    before = await window.start()
    result, after = await window.during(run_pass(config, dataset.rows, on_done=on_done))
    counters = delta(before, after)
    specs = [r.spec for r in result.records if r.spec is not None]
    summary = al_mod.summarize(counters, specs)
    reasons = checks.check_cell(
        records=result.records,
        expected=len(dataset.rows),
        counters=counters,
        k=settings.draft_length,
        thinking=settings.thinking,
        rendered=rendered,
    )
    if render_error is not None:
        reasons.append(
            checks.Reason("rendered-prompt", f"could not ask the server: {render_error}")
        )
    return CellOutcome(
        settings,
        dataset,
        rendered,
        render_error,
        before,
        after,
        counters,
        result,
        summary,
        tuple(reasons),
    )


def run_cell(
    settings: CellSettings, dataset: Dataset, *, on_done: OnDone | None = None
) -> CellOutcome:
    """Run one cell; a scrape failure is reported as a reason-carrying ScrapeError."""
    started = time.monotonic()
    try:
        return asyncio.run(_run(settings, dataset, on_done))
    except ScrapeError as exc:
        raise ScrapeError(f"{exc} (after {time.monotonic() - started:.1f}s)") from None

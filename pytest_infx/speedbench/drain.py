"""A cell's speculative counters from an engine whose ``/metrics`` is a queue of per-iteration
stats that each read drains (TensorRT-LLM), not Prometheus counters.

A before/after difference reads nothing from such a queue: each read returns only the
iterations since the one before, and the queue is bounded, so what is not read in time is
dropped. The queue is therefore drained once before the pass (what it holds is earlier
traffic), read every ``interval_s`` while the pass runs and once after it, and the window's
counters are the sums over every iteration read. An iteration is known by the engine's own
number, so one returned by two reads counts once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from pytest_infx.engines.base import EngineAdapter
from pytest_infx.engines.spec import IterationSpec, SpecCounters
from pytest_infx.speedbench.metrics import ScrapeError, metrics_text, metrics_url

T = TypeVar("T")
INTERVAL_S = 0.5


@dataclass
class IterationSums:
    """The sums over the iterations read so far, each iteration once."""

    engine: str
    series: Mapping[str, str] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0

    def add(self, iterations: tuple[IterationSpec, ...]) -> None:
        for it in iterations:
            if it.iteration in self.seen:
                continue
            self.seen.add(it.iteration)
            self.drafts += it.drafts
            self.draft_tokens += it.draft_tokens
            self.accepted += it.accepted

    def counters(self) -> SpecCounters:
        """Counters as a counter engine's would read had they started at zero; none at all
        while no iteration carried speculative figures (the server does not speculate)."""
        if not self.seen:
            return SpecCounters(engine=self.engine, series=self.series)
        return SpecCounters(
            engine=self.engine,
            drafts=float(self.drafts),
            draft_tokens=float(self.draft_tokens),
            accepted=float(self.accepted),
            series=self.series,
        )


class IterationDrain:
    """Reads one server's iteration queue around a pass."""

    def __init__(
        self, base_url: str, adapter: EngineAdapter, *, interval_s: float = INTERVAL_S
    ) -> None:
        self.base_url = base_url
        self.adapter = adapter
        self.interval_s = interval_s
        self.sums = IterationSums(adapter.name, series=_series(adapter))

    async def read(self) -> tuple[IterationSpec, ...]:
        text = await metrics_text(self.base_url)
        try:
            return self.adapter.spec_iterations(json.loads(text))
        except ValueError as exc:
            raise ScrapeError(
                f"GET {metrics_url(self.base_url)}: not {self.adapter.name}'s per-iteration"
                f" stats ({exc}): {text[:300]}"
            ) from None

    async def start(self) -> SpecCounters:
        """Empties the queue of what ran before the pass; the counters are then zero."""
        await self.read()
        return self.sums.counters()

    async def during(self, work: Awaitable[T]) -> tuple[T, SpecCounters]:
        """Runs ``work`` while reading the queue, then reads it once more after."""
        task = asyncio.ensure_future(work)
        while True:
            done, _ = await asyncio.wait({task}, timeout=self.interval_s)
            if done:
                break
            try:
                self.sums.add(await self.read())
            except ScrapeError:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise
        result = task.result()
        self.sums.add(await self.read())
        return result, self.sums.counters()


def _series(adapter: EngineAdapter) -> dict[str, str]:
    return {
        "drafts": f"{adapter.name} per-iteration requests with draft tokens",
        "draft_tokens": f"{adapter.name} per-iteration draft tokens",
        "accepted": f"{adapter.name} per-iteration accepted tokens",
    }

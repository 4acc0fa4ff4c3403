"""Reading a queue of per-iteration stats around a pass: what ran before the pass is dropped,
an iteration two reads return counts once, and a body that is not the engine's shape or an HTTP
error stops the cell with the URL and the reason."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import pytest

from pytest_infx.engines.spec import SpecCounters
from pytest_infx.engines.trtllm import TrtllmAdapter
from pytest_infx.speedbench.drain import IterationDrain, IterationSums
from pytest_infx.speedbench.metrics import ScrapeError, delta


def stats(*iterations: tuple[int, int, int]) -> list[dict[str, object]]:
    """TensorRT-LLM's iteration stats, one per (iter, requests with drafts, accepted), k = 3."""
    return [
        {
            "iter": it,
            "iterLatencyMS": 12.5,
            "specDecodingStats": {
                "numDraftTokens": 3 * drafts,
                "numAcceptedTokens": accepted,
                "numRequestsWithDraftTokens": drafts,
                "acceptanceLength": 1 + accepted / drafts,
            },
        }
        for it, drafts, accepted in iterations
    ]


Answer = tuple[int, str]
R = TypeVar("R")


async def serving(answers: Sequence[Answer], body: Callable[[str], Awaitable[R]]) -> R:
    """Serves ``answers`` to successive ``GET /metrics`` (the last one repeats) while ``body``
    runs with the server's base URL."""
    queue = list(answers)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        status, text = queue.pop(0) if len(queue) > 1 else queue[0]
        data = text.encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        return await body(f"http://127.0.0.1:{port}")


def ok(payload: object) -> Answer:
    return 200, json.dumps(payload)


def test_the_sums_count_each_iteration_once() -> None:
    sums = IterationSums("trtllm")
    adapter = TrtllmAdapter()
    sums.add(adapter.spec_iterations(stats((1, 2, 3), (2, 2, 4))))
    sums.add(adapter.spec_iterations(stats((2, 2, 4), (3, 1, 0))))
    counters = sums.counters()
    assert (counters.drafts, counters.draft_tokens, counters.accepted) == (5.0, 15.0, 7.0)


def test_without_speculative_stats_the_server_does_not_speculate() -> None:
    sums = IterationSums("trtllm")
    sums.add(TrtllmAdapter().spec_iterations([{"iter": 1, "iterLatencyMS": 3.0}]))
    assert not sums.counters().speculating


def test_a_pass_counts_what_ran_during_it_and_not_before() -> None:
    answers = [
        ok(stats((1, 4, 12))),
        ok(stats((2, 1, 2), (3, 1, 1))),
        ok(stats((3, 1, 1), (4, 1, 2))),
        ok(stats((5, 1, 0))),
    ]

    async def body(url: str) -> tuple[str, SpecCounters, SpecCounters]:
        drain = IterationDrain(url, TrtllmAdapter(), interval_s=0.02)
        before = await drain.start()
        done = asyncio.Event()

        async def work() -> str:
            while len(drain.sums.seen) < 3:
                await asyncio.sleep(0.01)
            done.set()
            return "pass"

        result, after = await drain.during(work())
        assert done.is_set()
        return result, before, after

    result, before, after = asyncio.run(serving(answers, body))
    assert result == "pass"
    assert not before.speculating
    d = delta(before, after)
    assert (d.drafts, d.accepted, d.draft_tokens) == (4.0, 5.0, 12.0)


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ((500, "queue closed"), "HTTP 500: queue closed"),
        (ok({"iter": 1}), "expected a JSON list of iteration stats, got dict"),
        ((200, "vllm:num_requests_running 0"), "not trtllm's per-iteration stats"),
        (
            ok([{"iter": 2, "specDecodingStats": {"numDraftTokens": 3}}]),
            "entry 0 \\(iter 2\\): specDecodingStats lacks an integer",
        ),
    ],
)
def test_a_bad_answer_stops_the_cell_naming_it(answer: Answer, says: str) -> None:
    async def body(url: str) -> object:
        return await IterationDrain(url, TrtllmAdapter()).start()

    with pytest.raises(ScrapeError, match=says) as caught:
        asyncio.run(serving([answer], body))
    assert "/metrics" in str(caught.value)


def test_a_failed_read_during_the_pass_cancels_the_pass() -> None:
    cancelled = asyncio.Event()

    async def body(url: str) -> object:
        drain = IterationDrain(url, TrtllmAdapter(), interval_s=0.01)
        await drain.start()

        async def work() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        return await drain.during(work())

    with pytest.raises(ScrapeError, match="HTTP 503"):
        asyncio.run(serving([ok([]), (503, "gone")], body))
    assert cancelled.is_set()

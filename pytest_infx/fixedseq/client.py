"""The streaming completions client of a fixed-seq-len point, measuring as InferenceX's
``benchmark_serving.py`` does: every request of the set is queued at once (request rate
infinite) and at most ``concurrency`` are in flight; each frame that carries ``choices`` is a
token arrival (the first gives the TTFT, each later one an inter-token latency), the last one
ends the request's latency, and the output length is the server's ``usage.completion_tokens``.
The benchmark's duration runs from the first request sent to the last one ended; warm-up
requests (the first prompt, sent ``warmups`` times at the same concurrency) come before it and
are not counted.

It is our HTTP stack (``http1``) rather than aiohttp: each socket read is stamped when the poll
returns it and frames are parsed after the stream ends, so a burst of streams does not delay
the later streams' stamps.

``benchmark_serving.py`` opens a new connection for every request (an aiohttp session per
request), so its TTFT includes the TCP set-up and the server's accept; ``per-request`` does the
same, and is the default so that a point measures what InferenceX measures. ``kept-alive``
reuses one connection per concurrency slot, so its TTFT is the server's alone (on a paced
server, about 10 ms less); the two are different measurements, not better and worse ones.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_infx.fixedseq.prompts import RandomRequest
from pytest_infx.gcpause import paused
from pytest_infx.http1 import (
    Connection,
    Endpoint,
    HTTPError,
    Response,
    run_stamped,
    stamped_lines,
)

COMPLETIONS = "/v1/completions"
EXCERPT_CHARS = 300
Connections = Literal["per-request", "kept-alive"]


@dataclass(frozen=True, slots=True)
class FixedClientConfig:
    base_url: str
    model: str
    concurrency: int
    ignore_eos: bool = True
    warmups: int = 0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 300.0
    total_timeout_s: float = 3600.0
    pause_gc: bool = True
    connections: Connections = "per-request"


@dataclass(frozen=True, slots=True)
class Output:
    """One request as ``benchmark_serving.py`` keeps it; times in seconds."""

    success: bool
    generated_text: str
    output_tokens: int | None
    ttft_s: float
    itl_s: tuple[float, ...]
    latency_s: float
    error: str
    frames: int


@dataclass(frozen=True, slots=True)
class Outcome:
    outputs: tuple[Output, ...]
    duration_s: float
    started: float
    """Wall-clock epoch seconds at the first request, for the result file's date."""


def request_body(config: FixedClientConfig, request: RandomRequest) -> bytes:
    body: dict[str, object] = {
        "model": config.model,
        "prompt": request.prompt,
        "temperature": 0.0,
        "max_tokens": request.output_len,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if config.ignore_eos:
        body["ignore_eos"] = True
    return json.dumps(body).encode()


async def run_requests(
    config: FixedClientConfig,
    requests: Sequence[RandomRequest],
    *,
    clock: Callable[[], float] = time.perf_counter,
    on_done: Callable[[Output], None] | None = None,
) -> Outcome:
    """Warm up, then send every request once; the outputs keep the requests' order."""
    if config.concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {config.concurrency}")
    endpoint = Endpoint.parse(config.base_url)
    if requests and config.warmups:
        first = request_body(config, requests[0])
        await _drain(config, endpoint, [first] * config.warmups, clock, None)
    bodies = [request_body(config, r) for r in requests]
    started = time.time()
    t0 = clock()
    with paused(config.pause_gc):
        outputs = await _drain(config, endpoint, bodies, clock, on_done)
    return Outcome(tuple(outputs), clock() - t0, started)


async def _drain(
    config: FixedClientConfig,
    endpoint: Endpoint,
    bodies: Sequence[bytes],
    clock: Callable[[], float],
    on_done: Callable[[Output], None] | None,
) -> list[Output]:
    results: list[Output | None] = [None] * len(bodies)
    pending: Iterator[int] = iter(range(len(bodies)))

    async def worker() -> None:
        conn = Connection(
            endpoint,
            connect_timeout_s=config.connect_timeout_s,
            read_timeout_s=config.read_timeout_s,
            clock=clock,
        )
        try:
            for i in pending:
                if config.connections == "per-request":
                    # Closed, the connection opens anew inside the timed request.
                    conn.close()
                output = results[i] = await _one(conn, bodies[i], config.total_timeout_s, clock)
                if on_done is not None:
                    on_done(output)
        finally:
            conn.close()

    async with asyncio.TaskGroup() as group:
        for _ in range(min(config.concurrency, len(bodies))):
            group.create_task(worker())
    return [r for r in results if r is not None]


async def _one(conn: Connection, body: bytes, total_s: float, clock: Callable[[], float]) -> Output:
    response = Response()
    sent = clock()
    try:
        async with asyncio.timeout(total_s):
            await conn.request("POST", COMPLETIONS, body, response=response)
    except TimeoutError:
        conn.close()
        return _failed(f"request exceeded the total timeout of {total_s:g} s")
    except HTTPError as exc:
        return _failed(str(exc))
    if response.error is not None:
        return _failed(str(response.error))
    if response.status != 200:
        text = response.body.decode("utf-8", "replace")[:EXCERPT_CHARS]
        return _failed(f"HTTP {response.status}: {text}")
    return parse_stream(sent, response.pieces, response.stamps)


def _failed(error: str) -> Output:
    return Output(False, "", None, 0.0, (), 0.0, error, 0)


def parse_stream(sent: float, chunks: Sequence[bytes], stamps: Sequence[float]) -> Output:
    """A completed response's frames, read as ``benchmark_serving.py`` reads them."""
    payloads: list[bytes] = []
    when: list[float] = []
    done = False
    for line, stamp in stamped_lines(chunks, stamps):
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if payload == b"[DONE]":
            done = True
        elif payload:
            payloads.append(payload)
            when.append(stamp)
    try:
        frames = json.loads(b"[" + b",".join(payloads) + b"]") if payloads else []
    except ValueError:
        return _failed("a streamed frame is not JSON")
    text: list[str] = []
    arrivals: list[float] = []
    tokens: int | None = None
    for frame, stamp in zip(frames, when, strict=True):
        if not isinstance(frame, dict):
            continue
        if "error" in frame:
            return _failed(f"error in stream: {str(frame['error'])[:EXCERPT_CHARS]}")
        choices = frame.get("choices")
        if choices:
            arrivals.append(stamp)
            text.append(str(choices[0].get("text") or ""))
        usage = frame.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            tokens = usage["completion_tokens"]
    if not done:
        return _failed("the stream ended before 'data: [DONE]'")
    if not arrivals:
        return _failed("the stream carried no tokens")
    gaps = tuple(b - a for a, b in itertools.pairwise(arrivals))
    return Output(
        True, "".join(text), tokens, arrivals[0] - sent, gaps, arrivals[-1] - sent, "", len(frames)
    )


def run_requests_sync(
    config: FixedClientConfig,
    requests: Sequence[RandomRequest],
    *,
    on_done: Callable[[Output], None] | None = None,
) -> Outcome:
    """For the pytest item, which has no event loop: the loop stamps reads as ``speedbench``'s
    client does (uvloop where it is installed). ``on_done`` sees each measured request as it
    ends, inside the event loop, so it must only touch memory."""
    return run_stamped(lambda clock: run_requests(config, requests, clock=clock, on_done=on_done))

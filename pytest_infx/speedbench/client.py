"""Streaming chat-completions client for one SPEED-Bench pass.

Low overhead is the point: the client must not be the bottleneck nor bias TTFT. Bodies are encoded
before the clock starts, every raw socket chunk is only stamped and stored while the stream runs,
and the SSE frames are parsed after the stream ends, each frame carrying the arrival time of the
chunk that completed it. The chat template stays on the server: `chat_template_kwargs` is sent in
the body, never rendered here (rendering client-side is how a thinking-on cell measures thinking
off).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_infx.engines import registry
from pytest_infx.engines.spec import RequestSpecMetrics
from pytest_infx.gcpause import paused
from pytest_infx.http1 import (
    Connection,
    Endpoint,
    EventLoop,
    HTTPError,
    Response,
    run_stamped,
    stamped_lines,
)
from pytest_infx.speedbench.dataset import Prompt

__all__ = ["RequestSpecMetrics"]

ErrorKind = Literal["http", "stream", "timeout", "connection", "protocol"]
SpecReader = Callable[[Mapping[str, object]], RequestSpecMetrics | None]
EXCERPT_CHARS = 500


@dataclass(frozen=True, slots=True)
class Timeouts:
    """`read_s` bounds the gap between two socket reads, `total_s` one whole request."""

    connect_s: float = 10.0
    read_s: float = 300.0
    total_s: float = 3600.0


@dataclass(frozen=True, slots=True)
class RequestSampling:
    """Only the fields given are sent, so the server's own defaults apply to the rest."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    presence_penalty: float | None = None


@dataclass(frozen=True, slots=True)
class ClientConfig:
    base_url: str
    model: str
    max_tokens: int
    concurrency: int = 1
    sampling: RequestSampling = field(default_factory=RequestSampling)
    chat_template_kwargs: Mapping[str, object] | None = None
    extra_body: Mapping[str, object] | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    api_key: str | None = None
    pause_gc: bool = True
    spec_reader: SpecReader | None = None
    """Reads one frame's per-request speculative figures (the engine adapter's
    ``request_spec``); None tries every engine's."""


@dataclass(frozen=True, slots=True)
class RequestError:
    kind: ErrorKind
    message: str
    status: int | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as observed; times are seconds from `sent_at` (a `time.perf_counter` value)."""

    question_id: str
    content: str
    reasoning: str
    completion_tokens: int | None
    prompt_tokens: int | None
    ttft_s: float | None
    latency_s: float | None
    finish_reason: str | None
    spec: RequestSpecMetrics | None
    error: RequestError | None
    sent_at: float
    frames: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def first_token_at(self) -> float | None:
        return None if self.ttft_s is None else self.sent_at + self.ttft_s


@dataclass(frozen=True, slots=True)
class PassResult:
    """`started` is wall-clock epoch seconds, for reports; `wall_s` is the pass duration."""

    records: tuple[RequestRecord, ...]
    started: float
    wall_s: float

    @property
    def completed(self) -> int:
        return sum(1 for r in self.records if r.error is None)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.records if r.error is not None)


def request_body(config: ClientConfig, prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": prompt.messages_json(),
        "max_tokens": config.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    s = config.sampling
    for key, value in (
        ("temperature", s.temperature),
        ("top_p", s.top_p),
        ("top_k", s.top_k),
        ("seed", s.seed),
        ("presence_penalty", s.presence_penalty),
    ):
        if value is not None:
            body[key] = value
    if config.chat_template_kwargs is not None:
        body["chat_template_kwargs"] = dict(config.chat_template_kwargs)
    if config.extra_body:
        body.update(config.extra_body)
    return body


async def run_pass(
    config: ClientConfig,
    prompts: Sequence[Prompt],
    *,
    clock: Callable[[], float] = time.perf_counter,
    on_done: Callable[[RequestRecord], None] | None = None,
) -> PassResult:
    """Send every prompt once with at most `config.concurrency` in flight; records keep order.

    `on_done` sees each record as its request ends, inside the event loop, so it must only
    touch memory (the live progress counts requests and output tokens with it).

    The concurrency limit is a fixed set of workers draining one queue of requests, each worker
    with its own `http1` connection (see that module for why), so no request waits for a pool.
    With `pause_gc`, the cyclic garbage collector is off for the pass: a full collection stops
    the event loop for milliseconds, which lands on whichever first tokens arrive meanwhile.
    """
    if config.concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {config.concurrency}")
    bodies = [json.dumps(request_body(config, p)).encode() for p in prompts]
    results: list[RequestRecord | None] = [None] * len(prompts)
    pending: Iterator[int] = iter(range(len(prompts)))
    tls = ssl.create_default_context() if config.base_url.startswith("https:") else None
    total_s = config.timeouts.total_s
    qids = [p.question_id for p in prompts]
    endpoint = Endpoint.parse(config.base_url)
    auth = {"authorization": f"Bearer {config.api_key}"} if config.api_key else None
    reader = config.spec_reader or registry.installed().request_spec

    async def worker() -> None:
        conn = Connection(
            endpoint,
            connect_timeout_s=config.timeouts.connect_s,
            read_timeout_s=config.timeouts.read_s,
            ssl_context=tls,
            extra_headers=auth,
            clock=clock,
        )
        try:
            for i in pending:
                record = results[i] = await _http1_request(
                    conn, bodies[i], qids[i], total_s, reader
                )
                if on_done is not None:
                    on_done(record)
        finally:
            conn.close()

    started = time.time()
    t0 = time.perf_counter()
    with paused(config.pause_gc):
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(config.concurrency, len(prompts))):
                    group.create_task(worker())
        finally:
            wall = time.perf_counter() - t0
    return PassResult(
        records=tuple(r for r in results if r is not None), started=started, wall_s=wall
    )


def run_pass_sync(
    config: ClientConfig, prompts: Sequence[Prompt], *, loop: EventLoop = "auto"
) -> PassResult:
    """For callers without an event loop (pytest items); ``loop`` as in ``http1.run_stamped``."""
    return run_stamped(lambda clock: run_pass(config, prompts, clock=clock), loop=loop)


async def _http1_request(
    conn: Connection, body: bytes, question_id: str, total_s: float, reader: SpecReader
) -> RequestRecord:
    response = Response()
    error: RequestError | None = None
    sent = time.perf_counter()
    try:
        async with asyncio.timeout(total_s):
            await conn.request("POST", "/v1/chat/completions", body, response=response)
    except TimeoutError:
        conn.close()
        error = RequestError("timeout", f"request exceeded the total timeout of {total_s:g} s")
    except HTTPError as exc:
        error = RequestError("timeout" if exc.kind == "timeout" else "connection", str(exc))
    if error is None and response.error is not None:
        kind = response.error.kind
        error = RequestError("timeout" if kind == "timeout" else "connection", str(response.error))
    if error is None and response.status != 200:
        text = response.body.decode("utf-8", "replace")[:EXCERPT_CHARS]
        status = response.status
        return _parse_stream(
            question_id, sent, [], [], RequestError("http", f"HTTP {status}: {text}", status)
        )
    return _parse_stream(question_id, sent, response.pieces, response.stamps, error, reader)


@dataclass(slots=True)
class _StreamState:
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    first: float | None = None
    last: float | None = None
    finish: str | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    spec: RequestSpecMetrics | None = None
    error: RequestError | None = None
    done: bool = False
    frames: int = 0


def _parse_stream(
    question_id: str,
    sent: float,
    chunks: Sequence[bytes],
    stamps: Sequence[float],
    error: RequestError | None,
    reader: SpecReader | None = None,
) -> RequestRecord:
    reader = reader or registry.installed().request_spec
    state = _StreamState()
    payloads: list[bytes] = []
    when: list[float] = []
    flagged: set[int] = set()
    event: bytes | None = None
    for line, stamp in stamped_lines(chunks, stamps):
        if line.startswith(b"data:"):
            payload = line[5:].strip()
            if payload == b"[DONE]":
                state.done = True
                continue
            if event == b"error":
                flagged.add(len(payloads))
            payloads.append(payload)
            when.append(stamp)
        elif line.startswith(b"event:"):
            event = line[6:].strip()
        elif not line:
            event = None
    state.frames = len(payloads)
    for i, obj in enumerate(_decode_all(payloads, state)):
        if obj is not None:
            _frame(state, obj, when[i], reader, is_error_event=i in flagged)
    if error is None:
        error = state.error
    if error is None and not state.done:
        error = RequestError("protocol", "stream ended before 'data: [DONE]'")
    return RequestRecord(
        question_id=question_id,
        content="".join(state.content),
        reasoning="".join(state.reasoning),
        completion_tokens=state.completion_tokens,
        prompt_tokens=state.prompt_tokens,
        ttft_s=None if state.first is None else state.first - sent,
        latency_s=None if state.last is None else state.last - sent,
        finish_reason=state.finish,
        spec=state.spec,
        error=error,
        sent_at=sent,
        frames=state.frames,
    )


def _decode_all(payloads: list[bytes], state: _StreamState) -> list[Any]:
    """All frames in one `json.loads` of a JSON array: a third of the cost of one call per frame.

    A frame that is not JSON breaks the array; only then is each frame decoded alone, to name it.
    """
    if not payloads:
        return []
    try:
        objs: list[Any] = json.loads(b"[" + b",".join(payloads) + b"]")
        if len(objs) == len(payloads):
            return objs
    except ValueError:
        pass
    out: list[Any] = []
    for payload in payloads:
        try:
            out.append(json.loads(payload))
        except ValueError:
            out.append(None)
            if state.error is None:
                excerpt = payload[:EXCERPT_CHARS].decode("utf-8", "replace")
                state.error = RequestError("protocol", f"unparsable SSE data frame: {excerpt}")
    return out


def _frame(
    state: _StreamState, obj: Any, stamp: float, reader: SpecReader, *, is_error_event: bool
) -> None:
    if type(obj) is not dict:
        return
    if is_error_event or "error" in obj:
        if state.error is None:
            state.error = _stream_error(obj)
        return
    choices = obj.get("choices")
    if choices:
        choice = choices[0]
        delta = choice.get("delta") or {}
        text = delta.get("content")
        thought = delta.get("reasoning") or delta.get("reasoning_content")
        if text:
            state.content.append(text)
        if thought:
            state.reasoning.append(thought)
        if text or thought:
            if state.first is None:
                state.first = stamp
            state.last = stamp
        finish = choice.get("finish_reason")
        if finish:
            state.finish = finish
    usage = obj.get("usage")
    if usage is not None and type(usage) is dict:
        state.completion_tokens = _int_or_none(usage.get("completion_tokens"))
        state.prompt_tokens = _int_or_none(usage.get("prompt_tokens"))
    spec = reader(obj)
    if spec is not None:
        state.spec = spec


def _stream_error(obj: Mapping[str, object]) -> RequestError:
    err = obj.get("error", obj)
    if isinstance(err, dict):
        message = str(err.get("message") or err)
        code = _int_or_none(err.get("code"))
    else:
        message, code = str(err), None
    return RequestError("stream", f"error event in stream: {message[:EXCERPT_CHARS]}", code)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None

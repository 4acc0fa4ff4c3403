"""An OpenAI-compatible stand-in that streams in vLLM's exact SSE shape, for faults on demand.

A real engine cannot be told to answer 500 to one request, stall another, or end a stream early;
this server can, steered by markers inside the prompt text:

    [[fail:503]]   answer HTTP 503 with a JSON error body
    [[error]]      stream two chunks, then vLLM's in-stream error frame
    [[event-error]] the same, as an SSE `event: error` frame
    [[stall]]      send the first chunk, then nothing
    [[empty]]      stream no text, usage 0 completion tokens
    [[truncate]]   close the connection before `data: [DONE]`
    [[think]]      put the text in `<think>...</think>` inside content

and `/metrics` can be broken on demand through `state.metrics_fault`.

With `chat_template_kwargs.enable_thinking` true the text goes to `delta.reasoning`, as vLLM's
reasoning parser does. Every answer updates vLLM-named speculative counters on `/metrics`, and the
usage chunk carries matching `metrics.speculative_decoding`, so the two AL sources agree.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

TEXT_PIECES = (
    "def ",
    "add",
    "(a, b):\n",
    "    return ",
    "a + b",
    "\n\n",
    "print(",
    "add(1, 2))\n",
)


@dataclass
class StandinState:
    """Shared with the test thread; written only by the server loop."""

    k: int = 3
    tokens_per_chunk: int = 2
    chunk_delay_s: float = 0.0
    model: str = "standin-model"
    extra_metrics: str = ""
    metrics_fault: str = ""
    tokenize_status: int = 200
    bodies: list[dict[str, Any]] = field(default_factory=list)
    gc_enabled: list[bool] = field(default_factory=list)
    inflight: int = 0
    max_inflight: int = 0
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    per_pos: list[int] = field(default_factory=list)
    generation_tokens: int = 0

    def reset_counters(self) -> None:
        """What a server restart does to the Prometheus counters."""
        self.drafts = self.draft_tokens = self.accepted = self.generation_tokens = 0
        self.per_pos = [0] * self.k

    def metrics_text(self) -> str:
        labels = f'engine="0",model_name="{self.model}"'
        lines = []
        for name, value, doc in (
            ("num_drafts", self.drafts, "Number of spec decoding drafts."),
            ("num_draft_tokens", self.draft_tokens, "Number of draft tokens."),
            ("num_accepted_tokens", self.accepted, "Number of accepted tokens."),
        ):
            full = f"vllm:spec_decode_{name}"
            lines += [
                f"# HELP {full}_total {doc}",
                f"# TYPE {full}_total counter",
                f"{full}_total{{{labels}}} {float(value)}",
                f"# HELP {full}_created {doc}",
                f"# TYPE {full}_created gauge",
                f"{full}_created{{{labels}}} 1.7962009201398273e+09",
            ]
        full = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        lines += [f"# HELP {full} Accepted tokens per draft position.", f"# TYPE {full} counter"]
        for i, v in enumerate(self.per_pos):
            lines.append(f'{full}{{{labels},position="{i}"}} {float(v)}')
        lines.append(f"vllm:generation_tokens_total{{{labels}}} {float(self.generation_tokens)}")
        return self._faulty("\n".join(lines) + "\n" + self.extra_metrics)

    def _faulty(self, text: str) -> str:
        """``metrics_fault``: ``empty`` serves an empty body, ``inf`` the drafts counter as
        +Inf, ``no-accepted`` drops the accepted-tokens series (an exporter that lost it)."""
        if self.metrics_fault == "empty":
            return ""
        lines = text.splitlines()
        if self.metrics_fault == "inf":
            name = "vllm:spec_decode_num_drafts_total{"
            lines = [f"{ln.rsplit(' ', 1)[0]} +Inf" if ln.startswith(name) else ln for ln in lines]
        elif self.metrics_fault == "no-accepted":
            lines = [ln for ln in lines if "num_accepted_tokens_total" not in ln]
        return "\n".join(lines) + "\n"


class LoopbackServer:
    """An asyncio server on loopback in a daemon thread; ``url`` is ready once the constructor
    returns. Subclasses set their state first and answer in ``_handle``."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.url = ""
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self._ready.set()

        try:
            self._loop.run_until_complete(start())
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def close(self) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            for w in list(self._writers):
                w.close()
            me = asyncio.current_task()
            others = [task for task in asyncio.all_tasks() if task is not me]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StandinServer(LoopbackServer):
    """The OpenAI-compatible vLLM stand-in; ``settings`` shape its state (faults, pacing)."""

    def __init__(self, **settings: Any) -> None:
        self.state = StandinState(**settings)
        self.state.reset_counters()
        self.connections = 0
        super().__init__()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)
                }
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                keep = await self._route(method, path, body, writer)
                if not keep:
                    return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _route(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        if method == "GET" and path == "/metrics":
            return await _send(writer, 200, self.state.metrics_text().encode(), "text/plain")
        if method == "GET" and path == "/health":
            return await _send(writer, 200, b"", "text/plain")
        if method == "POST" and path == "/tokenize":
            if self.state.tokenize_status != 200:
                err = {"error": {"message": "stand-in tokenize failure"}}
                return await _send_json(writer, self.state.tokenize_status, err)
            req = json.loads(body)
            text = render_chatml(req["messages"], req.get("chat_template_kwargs") or {})
            tokens = [ord(c) for c in text]
            return await _send_json(writer, 200, {"count": len(tokens), "tokens": tokens})
        if method == "POST" and path == "/detokenize":
            req = json.loads(body)
            return await _send_json(writer, 200, {"prompt": "".join(chr(t) for t in req["tokens"])})
        if method == "POST" and path == "/v1/chat/completions":
            req = json.loads(body)
            self.state.bodies.append(req)
            self.state.gc_enabled.append(gc.isenabled())
            self.state.inflight += 1
            self.state.max_inflight = max(self.state.max_inflight, self.state.inflight)
            try:
                return await self._chat(req, writer)
            finally:
                self.state.inflight -= 1
        return await _send_json(writer, 404, {"error": {"message": f"no route {path}"}})

    async def _chat(self, req: Mapping[str, Any], writer: asyncio.StreamWriter) -> bool:
        st = self.state
        prompt = " ".join(str(m.get("content", "")) for m in req["messages"])
        fail = re.search(r"\[\[fail:(\d+)\]\]", prompt)
        if fail:
            status = int(fail.group(1))
            err = {
                "error": {"message": "stand-in failure", "type": "InternalError", "code": status}
            }
            return await _send_json(writer, status, err)
        thinking = bool((req.get("chat_template_kwargs") or {}).get("enable_thinking"))
        field_name = "reasoning" if thinking else "content"
        pieces = [] if "[[empty]]" in prompt else list(TEXT_PIECES)
        if "[[think]]" in prompt:
            pieces = ["<think>", "hmm", "</think>", *pieces]
        pieces = pieces[: max(0, int(req.get("max_tokens", 1000)))]
        rid = f"chatcmpl-{len(st.bodies)}"
        created = int(time.time())
        model = req.get("model", st.model)

        def chunk(choices: list[Any], **extra: Any) -> bytes:
            obj = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
                **extra,
            }
            return b"data: " + json.dumps(obj).encode() + b"\n\n"

        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        first = {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None}
        await _chunk(writer, chunk([{**first, "finish_reason": None}]))
        if "[[stall]]" in prompt:
            await asyncio.sleep(3600)
        for n, piece in enumerate(pieces):
            if n == 2 and ("[[error]]" in prompt or "[[event-error]]" in prompt):
                err = {"error": {"message": "engine died", "type": "InternalError", "code": 500}}
                prefix = b"event: error\n" if "[[event-error]]" in prompt else b""
                await _chunk(writer, prefix + b"data: " + json.dumps(err).encode() + b"\n\n")
                await _chunk(writer, b"data: [DONE]\n\n")
                await _chunk(writer, b"")
                return True
            if n == 2 and "[[truncate]]" in prompt:
                writer.close()
                return False
            if st.chunk_delay_s:
                await asyncio.sleep(st.chunk_delay_s)
            delta = {field_name: piece}
            await _chunk(writer, chunk([{"index": 0, "delta": delta, "logprobs": None}]))
        finish = "length" if len(pieces) < len(TEXT_PIECES) and pieces else "stop"
        last = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}
        await _chunk(writer, chunk([{**last, "stop_reason": None}]))
        steps = len(pieces)
        tokens = steps * st.tokens_per_chunk
        accepted_per_step = min(st.tokens_per_chunk - 1, st.k)
        st.drafts += steps
        st.draft_tokens += steps * st.k
        st.accepted += steps * accepted_per_step
        st.generation_tokens += tokens
        for i in range(accepted_per_step):
            st.per_pos[i] += steps
        hist = [0] * (st.k + 1)
        hist[accepted_per_step] = steps
        spec = {
            "mean_acceptance_length": 1 + accepted_per_step if steps else 0.0,
            "draft_acceptance_rate": accepted_per_step / st.k if steps else 0.0,
            "acceptance_histogram": hist,
            "num_spec_steps": steps,
            "num_accepted_draft_tokens": steps * accepted_per_step,
            "num_draft_tokens": steps * st.k,
            "num_spec_tokens": st.k,
            "per_step_accepted": None,
            "per_step_drafted": None,
        }
        usage = {"prompt_tokens": 11, "total_tokens": 11 + tokens, "completion_tokens": tokens}
        await _chunk(writer, chunk([], usage=usage, metrics={"speculative_decoding": spec}))
        await _chunk(writer, b"data: [DONE]\n\n")
        await _chunk(writer, b"")
        return True


def render_chatml(messages: list[Mapping[str, str]], kwargs: Mapping[str, Any]) -> str:
    """The CPU engine's ChatML template: the generation prompt opens `<think>` when asked."""
    out = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    out += "<|im_start|>assistant\n"
    if kwargs.get("enable_thinking"):
        out += "<think>\n"
    return out


async def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, ctype: str) -> bool:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    await writer.drain()
    return True


async def _send_json(writer: asyncio.StreamWriter, status: int, obj: Any) -> bool:
    return await _send(writer, status, json.dumps(obj).encode(), "application/json")

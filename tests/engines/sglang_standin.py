"""A stand-in for SGLang 0.5.21's HTTP server, for what a real SGLang cannot show on a CPU
machine (its CPU kernels are not published, so it cannot be installed here).

Everything it sends follows SGLang 0.5.21's source:

- ``/metrics`` (``srt/observability/metrics_collector.py``, ``TokenizerMetricsCollector``):
  ``sglang:generation_tokens_total`` with labels ``model_name``, ``engine_type`` (``unified``
  without disaggregation) and ``is_streaming``; ``sglang:spec_verify_calls_total`` with
  ``model_name`` and ``engine_type``; both incremented only when a request finishes
  (``observe_one_finished_request``: generation by the completion tokens, verify calls by
  ``spec_verify_ct`` when it is above 0); a labelled series appears when it is first
  incremented, and prometheus_client adds a ``_created`` sample to each. The scheduler's gauges
  (``SchedulerMetricsCollector``: ``sglang:num_running_reqs`` with ``model_name``,
  ``engine_type``, ``tp_rank``, ``pp_rank``, ``moe_ep_rank``) are there from the start.
- The chat stream (``entrypoints/openai/serving_chat.py``): ``chat.completion.chunk`` objects
  whose ``delta`` has ``role``, ``content``, ``reasoning_content`` and ``tool_calls``; a
  finish-reason chunk with ``matched_stop``; then, only when the request has
  ``return_spec_tokens_details: true`` (``protocol.py``, default false), a chunk with
  ``choices: []`` and ``sglext.spec_tokens_details`` (``SglExt`` drops its None fields); then
  the usage chunk (``choices: []``, ``usage`` with ``reasoning_tokens``), then ``[DONE]``.
- Per-request details (``managers/tokenizer_manager.py``): ``spec_accept_length`` =
  completion tokens / ``spec_verify_ct`` (the first token comes from prefill, not from a verify
  step), ``spec_num_proposed_drafts`` = verify calls x (num draft tokens - 1),
  ``spec_accept_rate`` = correct / proposed.
- Synthetic acceptance (``srt/speculative/spec_utils.py``, ``environ.py``): with
  ``SGLANG_SIMULATE_ACC_LEN`` set, each verify step accepts the simulated length; with
  ``SGLANG_SIMULATE_ACC_TOKEN_MODE`` at its default ``fixed``, ``predict.fill_(100)`` makes every
  token id 100; ``real-draft-token`` keeps the draft's and the target's tokens.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from speedbench.standin import LoopbackServer

WORDS = ("def ", "add", "(a, b)", ":\n", "    return ", "a + b", "\n")
FIXED_TOKEN = "<token 100>"


@dataclass
class SglangState:
    k: int = 3
    steps: int = 6
    model: str = "standin-model"
    env: Mapping[str, str] = field(default_factory=dict)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    verify_calls: int = 0
    generation: dict[str, int] = field(default_factory=dict)

    def accepted_per_step(self, request: int) -> int:
        """Drafts accepted per verify step: the simulated length when set, else varying by
        request so per-request ALs differ."""
        simulated = float(self.env.get("SGLANG_SIMULATE_ACC_LEN", "-1"))
        if simulated > 0:
            return max(0, min(self.k, math.floor(simulated) - 1))
        return request % (self.k + 1)

    def metrics_text(self) -> str:
        base = f'model_name="{self.model}",engine_type="unified"'
        ranks = f'{base},tp_rank="0",pp_rank="0",moe_ep_rank="0"'
        lines = [
            "# HELP sglang:num_running_reqs The number of running requests.",
            "# TYPE sglang:num_running_reqs gauge",
            f"sglang:num_running_reqs{{{ranks}}} 0.0",
            "# HELP sglang:generation_tokens_total Number of generation tokens processed.",
            "# TYPE sglang:generation_tokens_total counter",
        ]
        for streaming, value in self.generation.items():
            labels = f'{base},is_streaming="{streaming}"'
            lines.append(f"sglang:generation_tokens_total{{{labels}}} {float(value)}")
        for streaming in self.generation:
            labels = f'{base},is_streaming="{streaming}"'
            lines.append(f"sglang:generation_tokens_created{{{labels}}} 1.7962e+09")
        lines += [
            "# HELP sglang:spec_verify_calls_total Number of speculative decoding verification"
            " calls.",
            "# TYPE sglang:spec_verify_calls_total counter",
        ]
        if self.verify_calls:
            lines += [
                f"sglang:spec_verify_calls_total{{{base}}} {float(self.verify_calls)}",
                f"sglang:spec_verify_calls_created{{{base}}} 1.7962e+09",
            ]
        return "\n".join(lines) + "\n"


class SglangStandin(LoopbackServer):
    def __init__(self, **settings: Any) -> None:
        self.state = SglangState(**settings)
        super().__init__()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = dict(
                    (k.strip().lower(), v.strip())
                    for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)
                )
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                if method == "GET" and path == "/metrics":
                    await _send(writer, 200, self.state.metrics_text().encode(), "text/plain")
                elif method == "GET" and path == "/health":
                    await _send(writer, 200, b"", "text/plain")
                elif method == "POST" and path == "/v1/chat/completions":
                    await self._chat(json.loads(body), writer)
                else:
                    await _send(writer, 404, b'{"error": "no route"}', "application/json")
        finally:
            writer.close()

    async def _chat(self, req: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        st = self.state
        st.bodies.append(req)
        index = len(st.bodies)
        accepted = st.accepted_per_step(index)
        fixed = st.env.get("SGLANG_SIMULATE_ACC_TOKEN_MODE", "fixed") == "fixed"
        simulating = float(st.env.get("SGLANG_SIMULATE_ACC_LEN", "-1")) > 0
        thinking = bool((req.get("chat_template_kwargs") or {}).get("enable_thinking"))
        rid = f"{index:032x}"
        model = req.get("model", st.model)

        def chunk(choices: list[Any], **extra: Any) -> bytes:
            obj = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": choices,
                "usage": None,
                **extra,
            }
            return b"data: " + json.dumps(obj).encode() + b"\n\n"

        def delta(text: str) -> dict[str, Any]:
            key = "reasoning_content" if thinking else "content"
            d: dict[str, Any] = {"role": None, "content": None, "reasoning_content": None}
            d["tool_calls"] = None
            d[key] = text
            return {
                "index": 0,
                "delta": d,
                "logprobs": None,
                "finish_reason": None,
                "matched_stop": None,
            }

        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        tokens = 0

        def text(n: int) -> str:
            if simulating and fixed:
                return FIXED_TOKEN * n
            return "".join(WORDS[(tokens + i) % len(WORDS)] for i in range(n))

        await _chunk(writer, chunk([delta(text(1))]))
        tokens += 1
        for _ in range(st.steps):
            await _chunk(writer, chunk([delta(text(accepted + 1))]))
            tokens += accepted + 1
        finish = {
            "index": 0,
            "delta": {"role": None, "content": None, "reasoning_content": None, "tool_calls": None},
            "logprobs": None,
            "finish_reason": "stop",
            "matched_stop": None,
        }
        await _chunk(writer, chunk([finish]))
        if req.get("return_spec_tokens_details"):
            proposed = st.steps * st.k
            details = {
                "spec_accept_rate": st.steps * accepted / proposed,
                "spec_accept_length": tokens / st.steps,
                "spec_cap_length": 0.0,
                "spec_block_accept_length": 0.0,
                "spec_num_correct_drafts": st.steps * accepted,
                "spec_num_proposed_drafts": proposed,
                "spec_verify_ct": st.steps,
                "spec_correct_drafts_histogram": [],
                "spec_cap_lens_histogram": [],
            }
            await _chunk(writer, chunk([], sglext={"spec_tokens_details": details}))
        streaming = "true" if req.get("stream") else "false"
        st.generation[streaming] = st.generation.get(streaming, 0) + tokens
        st.verify_calls += st.steps
        usage = {
            "prompt_tokens": 11,
            "total_tokens": 11 + tokens,
            "completion_tokens": tokens,
            "prompt_tokens_details": None,
            "reasoning_tokens": 0,
        }
        await _chunk(writer, chunk([], usage=usage))
        await _chunk(writer, b"data: [DONE]\n\n")
        await _chunk(writer, b"")


async def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, ctype: str) -> None:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    await writer.drain()

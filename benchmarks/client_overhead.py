#!/usr/bin/env python3
"""Client overhead: request rate and TTFT bias of the SPEED-Bench client against an instant server.

The stand-in runs in its own process and answers every chat request with one pre-encoded write;
its first content frame carries the server's CLOCK_MONOTONIC send time, so the client's TTFT stamp
minus that time is the bias the client adds (kernel, event loop, HTTP stack). With
`--vllm-python`, vLLM's own benchmark client runs against the same stand-in and settings; the
general-purpose clients httpx and aiohttp run in this process, each as a benchmark would use it.

    python benchmarks/client_overhead.py [--requests 4000] [--concurrency 32 256]
        [--arms httpx aiohttp] [--vllm-python PY --vllm-tokenizer DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal, cast

LoopName = Literal["stamping", "asyncio", "uvloop"]
CONTENT_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)
STAMP = re.compile(r"T=(\d+\.\d+);")


def _frame(obj: dict[str, Any]) -> bytes:
    data = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _chat_chunk(choices: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-0",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": choices,
        **extra,
    }


class InstantServer(asyncio.Protocol):
    """HTTP/1.1 keep-alive, no framework: parse just enough to answer each request.

    With `ttft_s` and `itl_s` at 0 the whole response leaves in one write (the client is then
    the only bottleneck); otherwise frames are paced like an engine's, so the client is not
    saturated and the bias shows its own latency rather than its queue.
    """

    frames = 16
    ttft_s = 0.0
    itl_s = 0.0
    route = b"POST /v1/chat/completions"
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"transfer-encoding: chunked\r\n\r\n"
    ) + _frame(_chat_chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}}]))
    token = _frame(_chat_chunk([{"index": 0, "delta": {"content": " tok"}}]))
    stamped = json.dumps(
        _chat_chunk([{"index": 0, "delta": {"content": "T=%.9f;"}}]), separators=(",", ":")
    )
    end = b""

    @classmethod
    def configure(cls, frames: int, ttft_s: float, itl_s: float) -> None:
        cls.frames, cls.ttft_s, cls.itl_s = frames, ttft_s, itl_s
        usage = {"prompt_tokens": 8, "completion_tokens": frames, "total_tokens": 8 + frames}
        done = b"data: [DONE]\n\n"
        cls.end = (
            _frame(_chat_chunk([{"index": 0, "delta": {}, "finish_reason": "length"}]))
            + _frame(_chat_chunk([], usage=usage))
            + f"{len(done):x}\r\n".encode()
            + done
            + b"\r\n0\r\n\r\n"
        )

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.buf = b""
        self.loop = asyncio.get_running_loop()

    def stamped_frame(self) -> bytes:
        line = b"data: " + (self.stamped % time.perf_counter()).encode() + b"\n\n"
        return f"{len(line):x}\r\n".encode() + line + b"\r\n"

    def data_received(self, data: bytes) -> None:
        self.buf = self.buf + data if self.buf else data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end]
            m = CONTENT_LENGTH.search(head)
            size = int(m.group(1)) if m else 0
            if len(self.buf) < end + 4 + size:
                return
            self.buf = self.buf[end + 4 + size :]
            if not head.startswith(self.route):
                body = b"" if head.startswith(b"GET /metrics") else b"{}"
                self.transport.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
                    + f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
            elif self.ttft_s == 0 and self.itl_s == 0:
                rest = self.token * (self.frames - 1) + self.end
                self.transport.write(self.head + self.stamped_frame() + rest)
            else:
                self.transport.write(self.head)
                self.loop.call_later(self.ttft_s, self.paced, 0)

    def paced(self, sent: int) -> None:
        if self.transport.is_closing():
            return
        if sent == 0:
            self.transport.write(self.stamped_frame())
        else:
            self.transport.write(self.token)
        if sent + 1 >= self.frames:
            self.transport.write(self.end)
        else:
            self.loop.call_later(self.itl_s, self.paced, sent + 1)


def serve(protocol: type[InstantServer] = InstantServer) -> None:
    """Child process: print the port, then serve until the parent closes stdin or kills us."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(protocol, "127.0.0.1", 0, backlog=4096)
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def run_ours(
    url: str, requests: int, concurrency: int, *, pause_gc: bool, loop: LoopName
) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from pytest_infx.speedbench.client import ClientConfig, run_pass_sync
    from pytest_infx.speedbench.dataset import Message, Prompt

    prompt = (Message("user", "write a function that adds two numbers"),)
    prompts = [Prompt(str(i), "coding", prompt) for i in range(requests)]
    cfg = ClientConfig(
        base_url=url,
        model="m",
        max_tokens=16,
        concurrency=concurrency,
        pause_gc=pause_gc,
    )
    run_pass_sync(cfg, prompts[: min(requests, concurrency * 4)], loop=loop)
    result = run_pass_sync(cfg, prompts, loop=loop)
    failed = [r for r in result.records if r.error is not None]
    if failed:
        raise SystemExit(f"our client: {len(failed)} requests failed, first: {failed[0].error}")
    done = [
        (r.first_token_at - r.ttft_s, r.first_token_at, r.content)
        for r in result.records
        if r.first_token_at is not None and r.ttft_s is not None
    ]
    return _figures(result.wall_s, done)


CHAT_BODY = json.dumps(
    {
        "model": "m",
        "messages": [{"role": "user", "content": "write a function that adds two numbers"}],
        "max_tokens": 16,
        "stream": True,
    }
).encode()


async def _drive(
    one: Any, requests: int, concurrency: int
) -> tuple[float, list[tuple[float, float, str]]]:
    """``one()`` ``requests`` times, ``concurrency`` at once; each gives (sent, first, text)."""
    left = iter(range(requests))
    done: list[tuple[float, float, str]] = []

    async def lane() -> None:
        for _ in left:
            done.append(await one())

    started = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return time.perf_counter() - started, done


def _first_content(line: str) -> str:
    if not line.startswith("data: {"):
        return ""
    choices = json.loads(line[6:]).get("choices") or [{}]
    return str(choices[0].get("delta", {}).get("content") or "")


def _figures(wall_s: float, done: list[tuple[float, float, str]]) -> dict[str, Any]:
    ttft = [(first - sent) * 1e3 for sent, first, _ in done]
    bias = []
    for _, first, text in done:
        m = STAMP.match(text)
        if m:
            bias.append((first - float(m.group(1))) * 1e3)
    return {
        "req_s": len(done) / wall_s,
        "ttft_p50": pct(ttft, 50),
        "ttft_p99": pct(ttft, 99),
        "bias_p50": pct(bias, 50),
        "bias_p99": pct(bias, 99),
    }


def run_httpx(url: str, requests: int, concurrency: int) -> dict[str, Any]:
    """httpx's async client as an inference benchmark would use it: one pooled client,
    ``aiter_lines`` over the stream, the first non-empty content stamps TTFT."""
    import httpx

    async def main() -> tuple[float, list[tuple[float, float, str]]]:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

            async def one() -> tuple[float, float, str]:
                sent = time.perf_counter()
                first, text = 0.0, ""
                async with client.stream("POST", "/v1/chat/completions", content=CHAT_BODY) as r:
                    async for line in r.aiter_lines():
                        content = _first_content(line)
                        if content and not first:
                            first, text = time.perf_counter(), content
                return sent, first, text

            await _drive(one, min(requests, concurrency * 4), concurrency)
            return await _drive(one, requests, concurrency)

    return _figures(*asyncio.run(main()))


def run_aiohttp(url: str, requests: int, concurrency: int) -> dict[str, Any]:
    """aiohttp's client as vLLM's and InferenceX's benchmark_serving use it: one session, the
    response content read line by line."""
    import aiohttp

    async def main() -> tuple[float, list[tuple[float, float, str]]]:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(url, connector=connector) as session:

            async def one() -> tuple[float, float, str]:
                sent = time.perf_counter()
                first, text = 0.0, ""
                async with session.post("/v1/chat/completions", data=CHAT_BODY) as r:
                    async for raw in r.content:
                        content = _first_content(raw.decode().strip())
                        if content and not first:
                            first, text = time.perf_counter(), content
                return sent, first, text

            await _drive(one, min(requests, concurrency * 4), concurrency)
            return await _drive(one, requests, concurrency)

    return _figures(*asyncio.run(main()))


ARMS = {"httpx": run_httpx, "aiohttp": run_aiohttp}


VLLM_DRIVER = """
import argparse, json, sys
from vllm.benchmarks import serve
parser = argparse.ArgumentParser()
serve.add_cli_args(parser)
args = parser.parse_args(sys.argv[1:])
result = serve.main(args)
"""


def run_vllm(
    python: str, tokenizer: str, url: str, requests: int, concurrency: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        argv = [
            python,
            "-c",
            VLLM_DRIVER,
            "--backend", "openai-chat",
            "--base-url", url,
            "--endpoint", "/v1/chat/completions",
            "--model", "m",
            "--tokenizer", tokenizer,
            "--dataset-name", "random",
            "--random-input-len", "16",
            "--random-output-len", "16",
            "--num-prompts", str(requests),
            "--max-concurrency", str(concurrency),
            "--percentile-metrics", "ttft",
            "--metric-percentiles", "50,99",
            "--save-result",
            "--save-detailed",
            "--result-dir", out,
            "--result-filename", "vllm.json",
            "--disable-tqdm",
        ]  # fmt: skip
        env = {**os.environ, "VLLM_USE_RUST_BENCH": "0", "no_proxy": "*", "NO_PROXY": "*"}
        proc = subprocess.run(
            argv, check=False, capture_output=True, text=True, env=env, timeout=900
        )
        if proc.returncode != 0:
            raise SystemExit(f"vLLM client failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        data = json.loads((Path(out) / "vllm.json").read_text())
    ttfts = data.get("ttfts", [])
    ttft = [t * 1e3 for t in ttfts if t]
    bias: list[float] = []
    for start, first, text in zip(
        data.get("start_times", []), ttfts, data.get("generated_texts", []), strict=False
    ):
        m = STAMP.match(text or "")
        if m and first:
            bias.append((start + first - float(m.group(1))) * 1e3)
    return {
        "req_s": data["request_throughput"],
        "ttft_p50": pct(ttft, 50) if ttft else data.get("p50_ttft_ms", float("nan")),
        "ttft_p99": pct(ttft, 99) if ttft else data.get("p99_ttft_ms", float("nan")),
        "bias_p50": pct(bias, 50),
        "bias_p99": pct(bias, 99),
        "failed": data.get("failed", 0),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    ap.add_argument("--frames", type=int, default=16, help="content frames per response")
    ap.add_argument("--ttft-ms", type=float, default=0.0, help="stand-in delay to the 1st frame")
    ap.add_argument("--itl-ms", type=float, default=0.0, help="stand-in delay between frames")
    ap.add_argument("--vllm-python", help="python of an environment with vLLM installed")
    ap.add_argument("--vllm-tokenizer", help="local tokenizer directory for vLLM's client")
    ap.add_argument(
        "--loops",
        nargs="+",
        choices=["stamping", "asyncio", "uvloop"],
        default=["stamping"],
        help="event loops for our client (uvloop must be installed)",
    )
    ap.add_argument(
        "--arms",
        nargs="*",
        choices=sorted(ARMS),
        default=sorted(ARMS),
        help="general-purpose clients run beside ours (pip install httpx aiohttp)",
    )
    ap.add_argument("--keep-gc", action="store_true", help="leave the GC on during passes")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        InstantServer.configure(args.frames, args.ttft_ms / 1e3, args.itl_ms / 1e3)
        serve()
        return
    if args.vllm_python and not args.vllm_tokenizer:
        ap.error("--vllm-python needs --vllm-tokenizer (vLLM's client tokenizes its prompts)")

    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            f"--frames={args.frames}",
            f"--ttft-ms={args.ttft_ms}",
            f"--itl-ms={args.itl_ms}",
        ],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        rows: list[dict[str, Any]] = []
        for c in args.concurrency:
            for loop_kind in args.loops:
                ours = run_ours(url, args.requests, c, pause_gc=not args.keep_gc, loop=loop_kind)
                name = f"infx-http1-{loop_kind[:5]}"
                rows.append({"client": name, "concurrency": c, **ours})
            for arm in args.arms:
                rows.append({"client": arm, "concurrency": c, **ARMS[arm](url, args.requests, c)})
            if args.vllm_python:
                theirs = run_vllm(args.vllm_python, args.vllm_tokenizer, url, args.requests, c)
                rows.append({"client": "vllm", "concurrency": c, **theirs})
                ours_c = [
                    r for r in rows if r["concurrency"] == c and r["client"].startswith("infx")
                ]
                ratio = ours_c[0]["req_s"] / theirs["req_s"]
                rows[-1]["ratio_infx_over_vllm"] = ratio
    finally:
        server.kill()
        server.wait()

    print(
        f"{'client':<17} {'conc':>5} {'req/s':>9} {'ttft p50':>9} {'ttft p99':>9} "
        f"{'bias p50':>9} {'bias p99':>9}   (ms; {args.requests} requests, "
        f"{args.frames} frames, server ttft {args.ttft_ms:g} ms, itl {args.itl_ms:g} ms)"
    )
    for r in rows:
        line = (
            f"{r['client']:<17} {r['concurrency']:>5} {r['req_s']:>9.0f} {r['ttft_p50']:>9.3f} "
            f"{r['ttft_p99']:>9.3f} {r['bias_p50']:>9.3f} {r['bias_p99']:>9.3f}"
        )
        if "ratio_infx_over_vllm" in r:
            line += f"   infx/vllm req/s {r['ratio_infx_over_vllm']:.2f}"
        print(line)
    if any(r["client"] == "vllm" and r["bias_p50"] < 0 for r in rows):
        print(
            "note: a negative vLLM bias means its client stamped TTFT at the first chunk, the "
            "role-only one with empty content, before any text arrived"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    print(f"cpu cores: {os.cpu_count()}, python {sys.version.split()[0]}", file=sys.stderr)


if __name__ == "__main__":
    main()

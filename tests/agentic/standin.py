"""A stand-in OpenAI streaming server that fails an exact fraction of chat requests.

A real engine cannot be told to fail 11 of 100 requests, and the error gate has to be shown on
both sides of its threshold, so this server answers ``/v1/chat/completions`` by streaming
``max_tokens`` dummy tokens and fails the requests picked by :func:`is_failing`. Only the
standard library is used, so it runs from any interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import time
from dataclasses import dataclass, field
from fractions import Fraction

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}


def is_failing(index: int, fraction: Fraction) -> bool:
    """Whether the request with this 0-based index fails.

    Failures are spread evenly, so after ``n`` requests exactly ``floor(n * fraction)`` failed:
    11 of the first 100 at 0.11, 10 of the first 100 at 0.10.
    """
    return (index + 1) * fraction // 1 > index * fraction // 1


@dataclass
class StandinState:
    """Counters shared by every connection of one server."""

    fail_fraction: Fraction
    token_delay_s: float
    model: str
    chat_requests: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)


async def _read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return method, path.split("?", 1)[0], headers, body


def _head(status: int, content_type: str, length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS[status]}", f"Content-Type: {content_type}"]
    # Without a length the body is chunked, which keeps the connection reusable.
    lines.append(
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    )
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _send_json(writer: asyncio.StreamWriter, status: int, payload: object) -> None:
    body = json.dumps(payload).encode()
    writer.write(_head(status, "application/json", len(body)) + body)
    await writer.drain()


async def _send_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


def _max_tokens(request: dict[str, object]) -> int:
    for key in ("max_completion_tokens", "max_tokens"):
        value = request.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return 16


def _prompt_tokens(request: dict[str, object]) -> int:
    messages = request.get("messages")
    words = 0
    if isinstance(messages, list):
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                words += len(content.split())
    return max(words, 1)


async def _chat(writer: asyncio.StreamWriter, state: StandinState, body: bytes) -> None:
    index = state.chat_requests
    state.chat_requests += 1
    request = json.loads(body or b"{}")
    if is_failing(index, state.fail_fraction):
        state.failed += 1
        error = {"message": f"stand-in failure of request {index}", "type": "server_error"}
        await _send_json(writer, 500, {"error": error})
        return
    n = _max_tokens(request)
    created = int(time.time())
    rid = f"chatcmpl-standin-{index}"
    usage = {"prompt_tokens": _prompt_tokens(request), "completion_tokens": n}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    if not request.get("stream"):
        message = {"role": "assistant", "content": " ".join(["tok"] * n)}
        choice = {"index": 0, "message": message, "finish_reason": "length"}
        payload = {"id": rid, "object": "chat.completion", "created": created}
        payload |= {"model": state.model, "choices": [choice], "usage": usage}
        await _send_json(writer, 200, payload)
        return
    writer.write(_head(200, "text/event-stream", None))
    for i in range(n):
        delta: dict[str, str] = {"content": "tok" if i == 0 else " tok"}
        if i == 0:
            delta["role"] = "assistant"
        finish = "length" if i == n - 1 else None
        chunk = {"id": rid, "object": "chat.completion.chunk", "created": created}
        chunk |= {"model": state.model}
        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        await _send_chunk(writer, f"data: {json.dumps(chunk)}\n\n".encode())
        if state.token_delay_s:
            await asyncio.sleep(state.token_delay_s)
    final = {"id": rid, "object": "chat.completion.chunk", "created": created}
    final |= {"model": state.model, "choices": [], "usage": usage}
    await _send_chunk(writer, f"data: {json.dumps(final)}\n\n".encode())
    await _send_chunk(writer, b"data: [DONE]\n\n")
    await _send_chunk(writer, b"")


async def _metrics(writer: asyncio.StreamWriter, state: StandinState) -> None:
    text = (
        "# TYPE standin_requests_total counter\n"
        f"standin_requests_total {state.chat_requests}\n"
        "# TYPE standin_failed_total counter\n"
        f"standin_failed_total {state.failed}\n"
    ).encode()
    writer.write(_head(200, "text/plain; version=0.0.4", len(text)) + text)
    await writer.drain()


async def _serve_connection(
    state: StandinState, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while (request := await _read_request(reader)) is not None:
            method, path, _, body = request
            if method == "POST" and path == "/v1/chat/completions":
                await _chat(writer, state, body)
            elif method == "GET" and path == "/v1/models":
                model = {"id": state.model, "object": "model", "owned_by": "standin"}
                await _send_json(writer, 200, {"object": "list", "data": [model]})
            elif method == "GET" and path == "/metrics":
                await _metrics(writer, state)
            elif method == "GET" and path in ("/health", "/stats"):
                stats = {"chat_requests": state.chat_requests, "failed": state.failed}
                await _send_json(writer, 200, stats)
            else:
                await _send_json(writer, 404, {"error": {"message": f"no route {path}"}})
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def serve(*, host: str, port: int, state: StandinState) -> None:
    """Serve until SIGTERM or SIGINT, printing ``READY <port>`` once listening."""
    server = await asyncio.start_server(
        lambda r, w: _serve_connection(state, r, w), host=host, port=port
    )
    bound = server.sockets[0].getsockname()[1]
    print(f"READY {bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()
    print(f"STATS chat_requests={state.chat_requests} failed={state.failed}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-fraction", default="0", help="exact fraction, e.g. 0.11 or 1/9")
    parser.add_argument("--token-delay", type=float, default=0.001, help="seconds per token")
    parser.add_argument("--model", default="standin")
    args = parser.parse_args(argv)
    fraction = Fraction(args.fail_fraction)
    if not 0 <= fraction <= 1:
        parser.error(f"--fail-fraction must lie in [0, 1], got {args.fail_fraction}")
    state = StandinState(fail_fraction=fraction, token_delay_s=args.token_delay, model=args.model)
    asyncio.run(serve(host=args.host, port=args.port, state=state))


if __name__ == "__main__":
    main()

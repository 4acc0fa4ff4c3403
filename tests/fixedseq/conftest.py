"""A completions server for the client tests and the comparison with InferenceX's client."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def frame(obj: object) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def text(t: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "text": t}]}


def usage(tokens: int) -> dict[str, object]:
    return {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": tokens}}


@dataclass
class Server:
    url: str
    bodies: list[dict[str, object]] = field(default_factory=list)
    in_flight: int = 0
    most: int = 0
    connections: int = 0


async def _serve(
    server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    server.connections += 1
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        length = int(
            next(
                line.split(b":")[1]
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
        )
        body = json.loads(await reader.readexactly(length))
        server.bodies.append(body)
        server.in_flight += 1
        server.most = max(server.most, server.in_flight)
        if body.get("prompt") == "fail":
            server.in_flight -= 1
            payload = b'{"error": "no"}'
            writer.write(
                b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: %d\r\n\r\n%s"
                % (len(payload), payload)
            )
            await writer.drain()
            continue
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        tokens = int(str(body["max_tokens"]))
        for piece in [frame(text("x")) for _ in range(tokens)] + [
            frame(usage(tokens)),
            b"data: [DONE]\n\n",
        ]:
            await asyncio.sleep(0.002)
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        server.in_flight -= 1


@pytest.fixture
def server() -> Iterator[Server]:
    """A completions server on an event loop of its own thread, streaming ``max_tokens`` frames
    of one character each; the prompt ``fail`` gets an HTTP 500."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    found: list[Server] = []
    stop = asyncio.Event()

    async def main() -> None:
        srv = await asyncio.start_server(lambda r, w: _serve(found[0], r, w), "127.0.0.1", 0)
        found.append(Server(f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"))
        ready.set()
        async with srv:
            await stop.wait()

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()))
    thread.start()
    assert ready.wait(10)
    yield found[0]
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)
    loop.close()


REFERENCE_VAR = "INFX_INFERENCEX_REFERENCE"


@pytest.fixture(scope="session")
def reference() -> Path:
    """InferenceX's reference data: ``$INFX_INFERENCEX_REFERENCE``, else
    ``../shared/inferencex/843c6254f`` beside the repository; the test skips without it."""
    found = os.environ.get(REFERENCE_VAR)
    folder = Path(found) if found else REPO.parent / "shared" / "inferencex" / "843c6254f"
    if not (folder / "vectors").is_dir():
        pytest.skip(
            f"{folder / 'vectors'}: absent; set {REFERENCE_VAR} to InferenceX's reference data"
        )
    return folder

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from pytest_infx.fixedseq.client import ClientConfig, parse_stream, run_requests_sync
from pytest_infx.fixedseq.prompts import RandomRequest


def frame(obj: object) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def text(t: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "text": t}]}


def usage(tokens: int) -> dict[str, object]:
    return {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": tokens}}


def test_every_frame_with_choices_is_a_token_arrival() -> None:
    chunks = [
        frame(text("a")),
        frame(text("")) + frame(text("b")),
        frame(usage(3)),
        b"data: [DONE]\n\n",
    ]
    out = parse_stream(10.0, chunks, [10.5, 10.75, 11.0, 11.0])
    assert out.success and out.error == ""
    assert out.generated_text == "ab"
    assert out.output_tokens == 3
    assert out.ttft_s == pytest.approx(0.5)
    assert out.itl_s == pytest.approx((0.25, 0.0))
    assert out.latency_s == pytest.approx(0.75)
    assert out.frames == 4


@pytest.mark.parametrize(
    ("chunks", "error"),
    [
        ([frame(text("a"))], "ended before 'data: [DONE]'"),
        ([frame(usage(0)), b"data: [DONE]\n\n"], "carried no tokens"),
        ([frame({"error": {"message": "boom"}}), b"data: [DONE]\n\n"], "error in stream: "),
        ([b"data: {nope\n\n", b"data: [DONE]\n\n"], "not JSON"),
    ],
)
def test_a_stream_that_is_not_a_whole_completion_fails_the_request(
    chunks: list[bytes], error: str
) -> None:
    out = parse_stream(0.0, chunks, [1.0] * len(chunks))
    assert not out.success
    assert error in out.error


@dataclass
class Server:
    url: str
    bodies: list[dict[str, object]] = field(default_factory=list)
    in_flight: int = 0
    most: int = 0


async def _serve(
    server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
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


def _requests(*prompts: str, out: int = 4) -> list[RandomRequest]:
    return [RandomRequest(p, 10, out, (1, 2)) for p in prompts]


def test_warm_ups_go_first_and_the_measured_requests_keep_their_order(server: Server) -> None:
    config = ClientConfig(server.url, "m", concurrency=2, warmups=3)
    outcome = run_requests_sync(config, _requests("a", "b", "c", "d", "e"))
    prompts = [str(b["prompt"]) for b in server.bodies]
    assert prompts[:3] == ["a", "a", "a"]
    assert sorted(prompts[3:]) == ["a", "b", "c", "d", "e"]
    assert len(outcome.outputs) == 5
    assert all(
        o.success and o.output_tokens == 4 and o.generated_text == "xxxx" for o in outcome.outputs
    )
    assert server.most == 2
    assert outcome.duration_s > 0
    sent = server.bodies[-1]
    assert sent["ignore_eos"] is True and sent["stream"] is True and sent["max_tokens"] == 4
    assert sent["model"] == "m" and sent["temperature"] == 0.0


def test_a_failed_request_is_kept_with_its_error_and_the_rest_run(server: Server) -> None:
    config = ClientConfig(server.url, "m", concurrency=1)
    outcome = run_requests_sync(config, _requests("a", "fail", "b"))
    assert [o.success for o in outcome.outputs] == [True, False, True]
    assert outcome.outputs[1].error.startswith("HTTP 500")


def test_a_server_that_is_not_there_fails_every_request_by_name() -> None:
    config = ClientConfig("http://127.0.0.1:9", "m", concurrency=2, connect_timeout_s=2)
    outcome = run_requests_sync(config, _requests("a", "b"))
    assert [o.success for o in outcome.outputs] == [False, False]
    assert all("127.0.0.1:9" in o.error for o in outcome.outputs)

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import h11
import pytest
from speedbench.standin import StandinServer

from pytest_infx import http1
from pytest_infx.http1 import Connection, Endpoint, HTTPError, Response, fetch


@pytest.fixture
def standin() -> Iterator[StandinServer]:
    with StandinServer() as server:
        yield server


def call(
    base_url: str, method: str, path: str, body: bytes = b"", *, timeout_s: float = 5
) -> Response:
    return asyncio.run(fetch(base_url, method, path, body, timeout_s=timeout_s))


def chat(prompt: str) -> bytes:
    messages = [{"role": "user", "content": prompt}]
    return json.dumps({"model": "m", "messages": messages, "max_tokens": 64}).encode()


def test_get_returns_status_and_the_whole_body(standin: StandinServer) -> None:
    standin.state.drafts = 7
    resp = call(standin.url, "GET", "/metrics")
    assert resp.status == 200
    assert resp.headers["content-type"] == "text/plain"
    text = resp.body.decode()
    assert text == standin.state.metrics_text()
    assert 'vllm:spec_decode_num_drafts_total{engine="0",model_name="standin-model"} 7.0' in text


def test_post_sends_the_body_and_reads_json(standin: StandinServer) -> None:
    body = json.dumps({"model": "m", "tokens": [104, 105]}).encode()
    resp = call(standin.url, "POST", "/detokenize", body)
    assert resp.status == 200
    assert json.loads(resp.body) == {"prompt": "hi"}


def test_an_error_status_is_an_answer_not_a_failure(standin: StandinServer) -> None:
    resp = call(standin.url + "/prefix", "GET", "/metrics")
    assert resp.status == 404
    assert json.loads(resp.body) == {"error": {"message": "no route /prefix/metrics"}}


def test_each_call_opens_and_closes_its_own_connection(standin: StandinServer) -> None:
    for _ in range(3):
        assert call(standin.url, "GET", "/health").status == 200
    assert standin.connections == 3


def test_chunked_bodies_are_joined(standin: StandinServer) -> None:
    resp = call(standin.url, "POST", "/v1/chat/completions", chat("hello"))
    assert resp.status == 200
    assert resp.headers["transfer-encoding"] == "chunked"
    text = resp.body.decode()
    assert text.rstrip().endswith("data: [DONE]")
    assert text.count("data: ") > 5


def test_connection_refused_raises_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HTTPError, match=f"connect to 127.0.0.1:{port}") as info:
        call(f"http://127.0.0.1:{port}", "GET", "/metrics")
    assert info.value.kind == "connection"


def test_a_stalled_answer_raises_a_timeout_within_the_limit(standin: StandinServer) -> None:
    with pytest.raises(HTTPError) as info:
        call(standin.url, "POST", "/v1/chat/completions", chat("[[stall]]"), timeout_s=0.3)
    assert info.value.kind == "timeout"


def test_an_answer_cut_short_raises_instead_of_returning_part(standin: StandinServer) -> None:
    with pytest.raises(HTTPError, match="closed before the response ended") as info:
        call(standin.url, "POST", "/v1/chat/completions", chat("[[truncate]]"))
    assert info.value.kind == "connection"


class RawServer:
    """Answers each request on a connection with the next scripted reply, written in pieces
    with a pause between them: what an engine's socket writes can reach us in any split."""

    def __init__(self, replies: list[list[bytes]], pause_s: float = 0.05) -> None:
        self.replies = replies
        self.pause_s = pause_s
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for reply in self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                self.requests += 1
                for piece in reply:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(self.pause_s)
        finally:
            writer.close()


def on_one_connection(server: RawServer | IdleCloser, calls: int) -> list[Response | HTTPError]:
    async def main() -> list[Response | HTTPError]:
        srv = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        conn = Connection(
            Endpoint.parse(f"http://127.0.0.1:{port}"), connect_timeout_s=5, read_timeout_s=5
        )
        out: list[Response | HTTPError] = []
        try:
            for _ in range(calls):
                resp = await conn.request("POST", "/v1/completions", b"{}")
                out.append(resp.error if resp.error is not None else resp)
        finally:
            conn.close()
            srv.close()
        return out

    return asyncio.run(main())


def test_a_final_chunk_crlf_in_a_read_of_its_own_keeps_the_connection_usable() -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    first = [head + b"5\r\nhello\r\n0\r\n", b"\r\n"]
    second = [head + b"5\r\nworld\r\n0\r\n\r\n"]
    server = RawServer([first, second])
    answers = on_one_connection(server, 2)
    assert [a.body if isinstance(a, Response) else a for a in answers] == [b"hello", b"world"]
    assert server.requests == 2


def test_trailers_after_the_last_chunk_end_the_response_and_are_not_body() -> None:
    reply = [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nx-t: 1\r\n\r\n"]
    server = RawServer([reply, reply])
    answers = on_one_connection(server, 2)
    assert [a.body if isinstance(a, Response) else a for a in answers] == [b"ok", b"ok"]


def test_a_non_numeric_content_length_is_a_connection_error_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = RawServer([[b"HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\nhello"]])
    with caplog.at_level("ERROR", logger="asyncio"):
        [answer] = on_one_connection(server, 1)
    assert isinstance(answer, HTTPError)
    assert answer.kind == "connection"
    assert "Content-Length b'12abc'" in str(answer)
    assert not [r for r in caplog.records if "data_received" in r.getMessage()]


def test_a_body_longer_than_its_content_length_does_not_leak_into_the_next_answer() -> None:
    server = RawServer(
        [[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"], [b"HTTP/1.1 204 No Content\r\n\r\n"]]
    )
    answers = on_one_connection(server, 2)
    statuses = [a.status if isinstance(a, Response) else a for a in answers]
    assert statuses == [200, 204]


def test_a_reply_split_inside_its_status_line_and_chunk_sizes_is_read_whole() -> None:
    whole = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n10\r\n" + b"x" * 16
    whole += b"\r\n0\r\n\r\n"
    pieces = [whole[i : i + 3] for i in range(0, len(whole), 3)]
    server = RawServer([pieces], pause_s=0.001)
    [answer] = on_one_connection(server, 1)
    assert isinstance(answer, Response)
    assert answer.body == b"abc" + b"x" * 16


class IdleCloser:
    """Answers the first `answered` requests of each connection, then reads the next one and
    closes the connection without a byte of answer (or, with `partial`, after the head): what
    a client sees when uvicorn closes a kept connection as idle while its request is on the
    way."""

    OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"

    def __init__(self, answered: int, *, partial: bool = False) -> None:
        self.answered = answered
        self.partial = partial
        self.connections = 0
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    break
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                self.requests += 1
                if served == self.answered:
                    if self.partial:
                        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
                        await writer.drain()
                    break
                writer.write(self.OK)
                await writer.drain()
                served += 1
        finally:
            writer.close()


def test_a_kept_connection_closed_before_any_answer_sends_the_request_again_on_a_new_one() -> None:
    server = IdleCloser(answered=1)
    answers = on_one_connection(server, 3)
    assert [a.body if isinstance(a, Response) else a for a in answers] == [b"ok"] * 3
    assert (server.connections, server.requests) == (3, 5)


def test_a_new_connection_closed_before_any_answer_is_a_failure_not_sent_again() -> None:
    server = IdleCloser(answered=0)
    [answer] = on_one_connection(server, 1)
    assert isinstance(answer, HTTPError) and answer.kind == "connection"
    assert str(answer) == "connection closed before the response ended"
    assert (server.connections, server.requests) == (1, 1)


def test_a_kept_connection_closed_after_part_of_an_answer_is_a_failure_not_sent_again() -> None:
    server = IdleCloser(answered=1, partial=True)
    first, second = on_one_connection(server, 2)
    assert isinstance(first, Response) and first.body == b"ok"
    assert isinstance(second, HTTPError) and second.kind == "connection"
    assert (server.connections, server.requests) == (1, 2)


@dataclass(frozen=True)
class Outcome:
    """What a client makes of one response: its status, body and whether the connection can
    carry the next request, or that the response was refused."""

    status: int | None
    body: bytes
    reusable: bool
    refused: bool


def h11_reads(wire: bytes, method: bytes) -> Outcome:
    """The reference: h11's own client reading the response, then the end of the stream."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method=method, target=b"/", headers=[(b"host", b"x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(wire)
    conn.receive_data(b"")
    status, body = None, b""
    try:
        while True:
            event = conn.next_event()
            if isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                reusable = conn.their_state is h11.DONE and conn.our_state is h11.DONE
                return Outcome(status, body, reusable, refused=False)
            elif not isinstance(event, h11.InformationalResponse):
                return Outcome(None, b"", False, refused=True)
    except h11.RemoteProtocolError:
        return Outcome(None, b"", False, refused=True)


class _Transport(asyncio.Transport):
    def close(self) -> None:
        pass


def ours_reads(pieces: list[bytes], method: bytes) -> Outcome:
    """Our protocol fed the response in the given reads, then the end of the stream."""
    loop = asyncio.new_event_loop()
    try:
        proto = http1._Protocol(clock=lambda: 0.0)
        proto.connection_made(_Transport())
        response = Response()
        proto.begin(response, loop.create_future(), method.decode())
        for piece in pieces:
            if proto.response is None:
                break
            proto.data_received(piece)
        ended = proto.response is None
        if not ended:
            proto.connection_lost(None)
    finally:
        loop.close()
    if response.error is not None:
        return Outcome(None, b"", False, refused=True)
    return Outcome(response.status, response.body, proto.keep_alive and ended, refused=False)


def head(*fields: bytes) -> bytes:
    return b"\r\n".join([b"HTTP/1.1 200 OK", *fields, b"", b""])


CHUNKED = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
SSE = b'data: {"choices":[{"delta":{"content":" tok"}}]}\n\n'
CONFORMANCE: dict[str, bytes] = {
    "length": b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
    "length zero": b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
    "length repeated alike": head(b"content-length: 2, 2", b"Content-Length: 2") + b"ok",
    "chunked sse": CHUNKED
    + b"".join(b"%x\r\n%s\r\n" % (len(SSE), SSE) for _ in range(3))
    + b"0\r\n\r\n",
    "chunked upper hex ext ows": CHUNKED + b"A;name=v \r\n0123456789\r\n0\r\n\r\n",
    "chunked trailers": CHUNKED + b"2\r\nok\r\n0\r\nx-a: 1\r\nx-b:\t2 3\r\n\r\n",
    "chunked empty": CHUNKED + b"0\r\n\r\n",
    "chunked and length": head(b"content-length: 9", b"transfer-encoding: Chunked")
    + b"2\r\nok\r\n0\r\n\r\n",
    "no reason phrase": b"HTTP/1.1 200\r\ncontent-length: 2\r\n\r\nok",
    "lf only head": b"HTTP/1.1 200 OK\ncontent-length: 2\n\nok",
    "obs fold": b"HTTP/1.1 200 OK\r\nx-long: a\r\n  b\r\ncontent-length: 2\r\n\r\nok",
    "no content": b"HTTP/1.1 204 No Content\r\ncontent-length: 7\r\n\r\n",
    "not modified": b"HTTP/1.1 304 Not Modified\r\n\r\n",
    "continue first": b"HTTP/1.1 100 Continue\r\n\r\n" + head(b"content-length: 2") + b"ok",
    "connection close": head(b"connection: keep-alive, Close", b"content-length: 2") + b"ok",
    "two connection fields": head(
        b"connection: keep-alive", b"Connection: close", b"content-length: 2"
    )
    + b"ok",
    "trailer obs fold": CHUNKED + b"2\r\nok\r\n0\r\nx-a: 1\r\n\t2\r\n\r\n",
    "version 2.0": b"HTTP/2.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
    "switching protocols": b"HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\n\r\n",
    "http 1.0 length": b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
    "until close": b"HTTP/1.0 200 OK\r\n\r\nread to the end",
    "error status": b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\nbusy",
    "bad length": b"HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\nhello",
    "signed length": b"HTTP/1.1 200 OK\r\ncontent-length: +5\r\n\r\nhello",
    "conflicting lengths": b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok!",
    "gzip coding": b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "two codings": head(b"transfer-encoding: chunked", b"transfer-encoding: chunked")
    + b"0\r\n\r\n",
    "hex prefix size": CHUNKED + b"0x2\r\nok\r\n0\r\n\r\n",
    "signed size": CHUNKED + b"+2\r\nok\r\n0\r\n\r\n",
    "underscore size": CHUNKED + b"1_0\r\n" + b"x" * 16 + b"\r\n0\r\n\r\n",
    "size too long": CHUNKED + b"0" * 21 + b"2\r\nok\r\n0\r\n\r\n",
    "no footer": CHUNKED + b"2\r\nokXX0\r\n\r\n",
    "bad trailer": CHUNKED + b"2\r\nok\r\n0\r\nno colon here\r\n\r\n",
    "cut chunked": CHUNKED + b"5\r\nhel",
    "cut before last chunk": CHUNKED + b"2\r\nok\r\n",
    "cut in trailers": CHUNKED + b"2\r\nok\r\n0\r\n",
    "cut length": b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
    "cut head": b"HTTP/1.1 200 OK\r\ncontent-le",
    "header without colon": b"HTTP/1.1 200 OK\r\nbroken\r\ncontent-length: 0\r\n\r\n",
    "space before colon": b"HTTP/1.1 200 OK\r\ncontent-length : 0\r\n\r\n",
    "short status": b"HTTP/1.1 20 OK\r\ncontent-length: 0\r\n\r\n",
    "not http": b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
    "nul in value": b"HTTP/1.1 200 OK\r\nx-a: a\x00b\r\ncontent-length: 0\r\n\r\n",
    "leading blank line": b"\r\nHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
}


@pytest.mark.parametrize("method", [b"POST", b"HEAD"])
@pytest.mark.parametrize("name", sorted(CONFORMANCE))
def test_each_response_reads_as_h11_reads_it_at_every_split(name: str, method: bytes) -> None:
    """The hand-written body framing against h11 as the reference: the same status, body and
    reusability, or both refuse, whether the response comes in one read, in two reads split
    at any byte, or one byte a read."""
    wire = CONFORMANCE[name]
    expected = h11_reads(wire, method)
    splits = [[wire], [wire[i : i + 1] for i in range(len(wire))]]
    splits += [[wire[:i], wire[i:]] for i in range(1, len(wire))]
    for pieces in splits:
        assert ours_reads(pieces, method) == expected, (name, pieces)


def test_the_conformance_corpus_holds_both_verdicts() -> None:
    verdicts = {h11_reads(wire, b"POST").refused for wire in CONFORMANCE.values()}
    assert verdicts == {True, False}

"""A minimal HTTP/1.1 client on an asyncio protocol, built for streamed POST responses.

httpx moves each HTTP chunk through h11, httpcore, anyio and its own stream wrappers, and wakes
the reading coroutine for every chunk (benchmarks/client_overhead.py puts the two side by side).
Here h11 parses, since a home-made HTTP parser is one more thing to prove, and the socket callback
stamps and keeps each read and wakes the waiting request once, when h11 says the response ended.
Only what an
inference server speaks is supported: one request at a time per connection, Content-Length or
chunked bodies, keep-alive, optional TLS, no redirects or proxies. `fetch` reuses it for the few
small calls around a pass, so the plugin needs no second HTTP stack.
"""

from __future__ import annotations

import asyncio
import selectors
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast
from urllib.parse import urlsplit

import h11

MAX_HEAD_BYTES = 65536


class HTTPError(Exception):
    """Transport failure; `kind` is 'timeout' or 'connection'."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(slots=True)
class Response:
    """A finished (or cut-off) response: body pieces with the arrival time of their socket read."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    pieces: list[bytes] = field(default_factory=list)
    stamps: list[float] = field(default_factory=list)
    error: HTTPError | None = None

    @property
    def body(self) -> bytes:
        return b"".join(self.pieces)


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int
    tls: bool
    prefix: str

    @classmethod
    def parse(cls, base_url: str) -> Endpoint:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL {base_url!r} must be http://HOST[:PORT] or https://...")
        tls = parts.scheme == "https"
        port = parts.port or (443 if tls else 80)
        return cls(parts.hostname, port, tls, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        default = 443 if self.tls else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"


class _Protocol(asyncio.Protocol):
    """Feeds each read to h11 and keeps every body piece with the read's stamp; the waiting
    request is woken once, when h11 says the response ended (or the connection failed)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.response: Response | None = None
        self.done: asyncio.Future[None] | None = None
        self.last_read = 0.0
        self.keep_alive = True
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.keep_alive = False
        if self.response is not None:
            try:
                self.h11.receive_data(b"")
                self._events(self.response, self.clock())
            except h11.RemoteProtocolError:
                pass
        why = f": {exc}" if exc else ""
        self._fail("connection", f"connection closed before the response ended{why}")

    def begin(self, response: Response, done: asyncio.Future[None]) -> None:
        self.response = response
        self.done = done
        self.last_read = time.perf_counter()

    def data_received(self, data: bytes) -> None:
        stamp = self.clock()
        self.last_read = stamp
        self._feed(data, stamp)

    def _feed(self, data: bytes, stamp: float) -> None:
        try:
            self.h11.receive_data(data)
            if self.response is not None:
                self._events(self.response, stamp)
        except h11.RemoteProtocolError as exc:
            self._fail("connection", f"malformed HTTP response: {exc}")

    def _events(self, response: Response, stamp: float) -> None:
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Data):
                response.pieces.append(bytes(event.data))
                response.stamps.append(stamp)
            elif isinstance(event, h11.Response):
                response.status = event.status_code
                response.headers.update(
                    (name.decode("latin-1"), value.decode("latin-1"))
                    for name, value in event.headers
                )
            elif isinstance(event, h11.EndOfMessage):
                self._end()
                return

    def _end(self) -> None:
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
        else:
            self.keep_alive = False
        self._finish()

    def _finish(self) -> None:
        self.response = None
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

    def _fail(self, kind: str, message: str) -> None:
        if self.response is not None and self.response.error is None:
            self.response.error = HTTPError(kind, message)
        self.keep_alive = False
        self._finish()
        if self.transport is not None and not self.closed:
            self.transport.close()


class StampingSelector(selectors.DefaultSelector):
    """Remembers when each poll returned: the arrival time of every read it reported.

    A read callback runs after the ones queued before it in the same loop iteration; with 256
    streams a burst (one decode step of a batched engine) takes milliseconds to drain, and
    stamping inside each callback would add that queue to the TTFT of the later streams.
    """

    stamp = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = super().select(timeout)
        self.stamp = time.perf_counter()
        return events

    def clock(self) -> float:
        return self.stamp


def stamping_loop() -> tuple[asyncio.AbstractEventLoop, Callable[[], float]]:
    """An asyncio loop on a `StampingSelector`, and the clock that reads its poll times."""
    selector = StampingSelector()
    return asyncio.SelectorEventLoop(selector), selector.clock


class Connection:
    """One keep-alive connection, reopened on demand after a failure or a server close."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        connect_timeout_s: float,
        read_timeout_s: float,
        ssl_context: ssl.SSLContext | None = None,
        extra_headers: dict[str, str] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.endpoint = endpoint
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.ssl_context = ssl_context
        self.clock = clock
        self._proto: _Protocol | None = None
        fixed = {"host": endpoint.host_header, "accept-encoding": "identity"}
        fixed.update({k.lower(): v for k, v in (extra_headers or {}).items()})
        self._fixed = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in fixed.items()]

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        ep = self.endpoint
        tls: ssl.SSLContext | None = None
        if ep.tls:
            tls = self.ssl_context or ssl.create_default_context()
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                _, proto = await loop.create_connection(
                    lambda: _Protocol(self.clock),
                    ep.host,
                    ep.port,
                    ssl=tls,
                    server_hostname=ep.host if tls else None,
                )
        except TimeoutError:
            raise HTTPError(
                "timeout",
                f"connect to {ep.host}:{ep.port} timed out after {self.connect_timeout_s:g} s",
            ) from None
        except OSError as exc:
            raise HTTPError("connection", f"connect to {ep.host}:{ep.port}: {exc}") from None
        return proto

    async def request(
        self,
        method: str,
        path: str,
        body: bytes,
        *,
        content_type: str = "application/json",
        response: Response | None = None,
    ) -> Response:
        """Send one request and return when its response has ended, failed or stalled.

        Pass `response` to keep what arrived when the caller's own deadline cancels the wait.

        Stall detection is one timer per request that re-arms itself, not a timeout per read,
        so a streaming response costs no coroutine wake-ups until it is complete.
        """
        proto = self._proto
        if proto is None or proto.closed or not proto.keep_alive:
            if proto is not None and proto.transport is not None:
                proto.transport.close()
            proto = self._proto = await self._connect()
        loop = asyncio.get_running_loop()
        if response is None:
            response = Response()
        done: asyncio.Future[None] = loop.create_future()
        proto.begin(response, done)
        headers = [
            *self._fixed,
            (b"content-type", content_type.encode("latin-1")),
            (b"content-length", str(len(body)).encode()),
        ]
        target = f"{self.endpoint.prefix}{path}".encode("latin-1")
        wire = b"".join(
            proto.h11.send(event) or b""
            for event in (
                h11.Request(method=method, target=target, headers=headers),
                h11.Data(data=body),
                h11.EndOfMessage(),
            )
        )
        assert proto.transport is not None
        proto.transport.write(wire)
        timer = loop.call_later(self.read_timeout_s, self._watch, proto, done, loop)
        try:
            await done
        except asyncio.CancelledError:
            self.close()
            raise
        finally:
            timer.cancel()
        if response.error is not None:
            self.close()
        return response

    def _watch(
        self, proto: _Protocol, done: asyncio.Future[None], loop: asyncio.AbstractEventLoop
    ) -> None:
        if done.done():
            return
        idle = time.perf_counter() - proto.last_read
        if idle >= self.read_timeout_s:
            proto._fail("timeout", f"no data for {self.read_timeout_s:g} s (read timeout)")
            return
        loop.call_later(self.read_timeout_s - idle, self._watch, proto, done, loop)

    def close(self) -> None:
        if self._proto is not None and self._proto.transport is not None:
            self._proto.transport.close()
        self._proto = None


async def fetch(
    base_url: str,
    method: str,
    path: str,
    body: bytes = b"",
    *,
    timeout_s: float,
    content_type: str = "application/json",
) -> Response:
    """One small request on a connection of its own, for the calls around a pass (`/metrics`,
    `/tokenize`): they are seconds apart, so keeping a connection open between them buys nothing.

    `timeout_s` bounds the whole call, connect included. Any answer the server completes is
    returned whatever its status; a transport failure or the timeout raises `HTTPError`, so
    callers never get a response cut short.
    """
    endpoint = Endpoint.parse(base_url)
    tls = ssl.create_default_context() if endpoint.tls else None
    conn = Connection(
        endpoint, connect_timeout_s=timeout_s, read_timeout_s=timeout_s, ssl_context=tls
    )
    try:
        async with asyncio.timeout(timeout_s):
            response = await conn.request(method, path, body, content_type=content_type)
    except TimeoutError:
        raise HTTPError("timeout", f"no complete answer within {timeout_s:g} s") from None
    finally:
        conn.close()
    if response.error is not None:
        raise response.error
    return response

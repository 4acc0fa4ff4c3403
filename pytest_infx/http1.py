"""A minimal HTTP/1.1 client on an asyncio protocol, built for streamed POST responses.

httpx moves each HTTP chunk through h11, httpcore and its own stream wrappers: about 2 ms of CPU
for a 16-frame response (measured with benchmarks/client_overhead.py while the client still had
an httpx transport), which caps a pass at a few hundred requests per second and delays
first-token stamps behind other streams. Here the socket callback stamps and keeps each read,
de-chunks in place, and wakes the waiting request once, when the response ends. Only what an
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
    """Parses one response at a time as bytes arrive; never wakes the reader before the end."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.response: Response | None = None
        self.done: asyncio.Future[None] | None = None
        self.last_read = 0.0
        self.keep_alive = True
        self._head = b""
        self._mode = ""
        self._remaining = 0
        self._chunk_buf = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.response is not None and self._mode == "close":
            self._finish()
        else:
            why = f": {exc}" if exc else ""
            self._fail("connection", f"connection closed before the response ended{why}")

    def begin(self, response: Response, done: asyncio.Future[None]) -> None:
        self.response = response
        self.done = done
        self._head = b""
        self._mode = "head"
        self.last_read = time.perf_counter()

    def data_received(self, data: bytes) -> None:
        stamp = self.clock()
        self.last_read = stamp
        if self.response is None:
            return
        if self._mode == "head":
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            if end < 0:
                if len(self._head) > 65536:
                    self._fail("connection", "response headers exceed 64 KiB")
                return
            data = self._head[end + 4 :]
            if not self._parse_head(self._head[:end]):
                return
            self._head = b""
        if self._mode == "chunked":
            self._dechunk(data, stamp)
        elif self._mode == "length":
            take = data[: self._remaining]
            if take:
                self.response.pieces.append(take)
                self.response.stamps.append(stamp)
            self._remaining -= len(take)
            if self._remaining <= 0:
                self._finish()
        elif self._mode == "close" and data:
            self.response.pieces.append(data)
            self.response.stamps.append(stamp)

    def _parse_head(self, head: bytes) -> bool:
        assert self.response is not None
        lines = head.decode("latin-1").split("\r\n")
        status_line = lines[0].split(" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith("HTTP/1."):
            self._fail("connection", f"not an HTTP/1.x response: {lines[0][:100]!r}")
            return False
        try:
            self.response.status = int(status_line[1])
        except ValueError:
            self._fail("connection", f"bad status line {lines[0][:100]!r}")
            return False
        headers = self.response.headers
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        self.keep_alive = headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._mode = "chunked"
            self._chunk_buf = b""
            self._remaining = -1
        elif "content-length" in headers:
            self._mode = "length"
            self._remaining = int(headers["content-length"])
            if self._remaining == 0:
                self._finish()
                return False
        else:
            self._mode = "close"
            self.keep_alive = False
        return True

    def _dechunk(self, data: bytes, stamp: float) -> None:
        """`_remaining` is the bytes left in the current chunk (+2 for its CRLF), -1 = at a size."""
        assert self.response is not None
        buf = self._chunk_buf + data if self._chunk_buf else data
        self._chunk_buf = b""
        pos = 0
        n = len(buf)
        while pos < n:
            if self._remaining < 0:
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    self._chunk_buf = buf[pos:]
                    return
                try:
                    size = int(buf[pos:eol].split(b";", 1)[0], 16)
                except ValueError:
                    self._fail("connection", f"bad chunk size {buf[pos:eol][:40]!r}")
                    return
                pos = eol + 2
                if size == 0:
                    self._finish()
                    return
                self._remaining = size + 2
                continue
            take = min(self._remaining, n - pos)
            payload = min(take, self._remaining - 2)
            if payload > 0:
                self.response.pieces.append(buf[pos : pos + payload])
                self.response.stamps.append(stamp)
            self._remaining -= take
            pos += take
            if self._remaining == 0:
                self._remaining = -1

    def _finish(self) -> None:
        self._mode = "idle"
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
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")

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
        head = (
            f"{method} {self.endpoint.prefix}{path} HTTP/1.1\r\n".encode("latin-1")
            + self._fixed
            + f"content-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
        )
        assert proto.transport is not None
        proto.transport.write(head + body)
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

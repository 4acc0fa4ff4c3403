"""A minimal HTTP/1.1 client on an asyncio protocol, built for streamed POST responses.

httpx moves each HTTP chunk through h11, httpcore, anyio and its own stream wrappers and wakes
the reading coroutine for every chunk, and even h11 alone, driven from this protocol, cut its
request rate by more than half (benchmarks/client_overhead.py puts the clients side by side).
Here the socket callback stamps and keeps each read, de-chunks in place, and wakes the waiting
request once, when the response ends. The grammar is h11's, and the tests hold this parser to h11
as the reference: every response of a corpus, valid and not, read whole, split at any byte or
one byte at a time, reads the same or is refused by both. Only what an inference server speaks
is supported: one request at a time per connection, Content-Length or chunked bodies,
keep-alive, optional TLS, no redirects or proxies. `fetch` serves the few small calls around a
pass and the readiness probes, so the plugin has one HTTP stack.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import selectors
import ssl
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast
from urllib.parse import urlsplit

MAX_HEAD_BYTES = 65536
_BLANK_LINE = re.compile(rb"\n\r?\n")
_CHUNK_HEADER = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;[^\n]*)?[ \t]*\r\n")
_FIELD_VALUE = rb"[^\x00\s]+(?:[ \t]+[^\x00\s]+)*"
_FIELD_LINE = re.compile(rb"([-!#$%&'*+.^_`|~0-9a-zA-Z]+):[ \t]*(" + _FIELD_VALUE + rb")?[ \t]*")
_STATUS_LINE = re.compile(rb"HTTP/([0-9]\.[0-9]) ([0-9]{3})(?: (?:[ \t]|[^\x00\s])*)?")
_DIGITS = re.compile(rb"[0-9]{1,20}")
T = TypeVar("T")


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
    """Reads one response at a time as bytes arrive; never wakes the reader before the end."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.response: Response | None = None
        self.done: asyncio.Future[None] | None = None
        self.last_read = 0.0
        self.keep_alive = True
        self.answered = False
        """Whether any byte of the current response has arrived."""
        self.dropped = False
        """Whether the server closed the connection before any byte of the response."""
        self._method = b"GET"
        self._buf = b""
        self._mode = ""
        self._remaining = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.response is not None and self._mode == "close":
            self._finish()
        else:
            self.dropped = self.response is not None and not self.answered
            why = f": {exc}" if exc else ""
            self._fail("connection", f"connection closed before the response ended{why}")

    def begin(self, response: Response, done: asyncio.Future[None], method: str = "GET") -> None:
        self.response = response
        self.done = done
        self._method = method.encode("latin-1")
        self._buf = b""
        self._mode = "head"
        self.answered = False
        self.last_read = time.perf_counter()

    def data_received(self, data: bytes) -> None:
        stamp = self.clock()
        self.last_read = stamp
        if self.response is None:
            return
        self.answered = True
        if self._mode == "head":
            data = self._read_head(data)
            if not data:
                return
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

    def _read_head(self, data: bytes) -> bytes:
        """Buffers until a whole head is here, reads it, and returns the body bytes that came
        with it (b"" while the head is incomplete or the response takes no body)."""
        assert self.response is not None
        buf = self._buf + data if self._buf else data
        while self._mode == "head":
            found = _BLANK_LINE.search(buf)
            if found is None:
                if len(buf) > MAX_HEAD_BYTES:
                    self._fail("connection", "response head exceeds 64 KiB")
                    return b""
                self._buf = buf
                return b""
            head, buf = buf[: found.end()], buf[found.end() :]
            try:
                self._frame(_parse_head(head))
            except HTTPError as exc:
                self._fail(exc.kind, str(exc))
                return b""
        self._buf = b""
        return buf

    def _frame(self, head: _Head) -> None:
        """How the body ends, as h11 decides it (its `_body_framing` and `_keep_alive`); an
        informational (1xx) head is skipped and the next one read."""
        assert self.response is not None
        if head.status < 200:
            return
        self.response.status = head.status
        self.response.headers.update(head.headers)
        self.keep_alive = head.keep_alive
        if head.status in (204, 304) or self._method == b"HEAD":
            self._mode, self._remaining = "length", 0
        elif head.chunked:
            self._mode, self._remaining = "chunked", -1
        elif head.length is not None:
            self._mode, self._remaining = "length", head.length
        else:
            self._mode = "close"
            self.keep_alive = False
        if self._mode == "length" and self._remaining == 0:
            self._finish()

    def _dechunk(self, data: bytes, stamp: float) -> None:
        """`_remaining`: payload bytes left in the chunk plus its 2-byte CRLF footer; -1 while at
        a size line, -2 while in the trailer section."""
        assert self.response is not None
        buf = self._buf + data if self._buf else data
        self._buf = b""
        pos = 0
        n = len(buf)
        while pos < n and self.response is not None:
            rem = self._remaining
            if rem > 2:
                take = min(rem - 2, n - pos)
                self.response.pieces.append(buf[pos : pos + take])
                self.response.stamps.append(stamp)
                self._remaining -= take
                pos += take
            elif rem > 0:
                if buf[pos] != b"\r\n"[2 - rem]:
                    self._fail("connection", f"malformed chunk footer {buf[pos : pos + 2]!r}")
                    return
                pos += 1
                self._remaining = rem - 1 or -1
            elif rem == -1:
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    self._keep(buf[pos:])
                    return
                found = _CHUNK_HEADER.fullmatch(buf, pos, eol + 2)
                if found is None:
                    self._fail("connection", f"illegal chunk header {buf[pos:eol][:40]!r}")
                    return
                size = int(found[1], 16)
                self._remaining = size + 2 if size else -2
                pos = eol + 2
            else:
                if buf[pos : pos + 2] == b"\r\n" or buf[pos : pos + 1] == b"\n":
                    self._finish()
                    return
                end = _BLANK_LINE.search(buf, pos)
                if end is None:
                    self._keep(buf[pos:])
                    return
                try:
                    _fields(buf[pos : end.start()].split(b"\n"))
                except HTTPError as exc:
                    self._fail(exc.kind, f"trailer: {exc}")
                    return
                self._finish()
                return

    def _keep(self, partial: bytes) -> None:
        if len(partial) > MAX_HEAD_BYTES:
            self._fail("connection", "a chunk size line or trailer section exceeds 64 KiB")
        else:
            self._buf = partial

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


def _fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Field lines (CR or not) as lower-case names and values; obsolete line folds joined."""
    folded: list[bytes] = []
    for raw in lines:
        line = raw.removesuffix(b"\r")
        if line[:1] in (b" ", b"\t"):
            if not folded:
                raise HTTPError("connection", "a continuation line opens the field lines")
            folded[-1] += b" " + line.lstrip(b" \t")
        else:
            folded.append(line)
    fields = []
    for line in folded:
        field = _FIELD_LINE.fullmatch(line)
        if field is None:
            raise HTTPError("connection", f"illegal field line {line[:100]!r}")
        fields.append((field[1].lower(), field[2] or b""))
    return fields


@dataclass(frozen=True, slots=True)
class _Head:
    status: int
    headers: dict[str, str]
    keep_alive: bool
    chunked: bool
    length: int | None


def _parse_head(head: bytes) -> _Head:
    """A response head (through its blank line) read by RFC 9112's grammar as h11 applies it:
    lines end in LF or CRLF, obsolete line folds are joined, a field line must match the field
    grammar, Content-Length must be one run of digits however often it is repeated, and the
    only transfer coding is a single `chunked`. Anything else is refused."""
    lines = head.split(b"\n")[:-2]
    status_line = _STATUS_LINE.fullmatch(lines[0].removesuffix(b"\r")) if lines else None
    if status_line is None:
        raise HTTPError("connection", f"not an HTTP/1.x status line: {head[:100]!r}")
    headers: dict[str, str] = {}
    length: bytes | None = None
    chunked = False
    keep_alive = status_line[1] >= b"1.1"
    for name, value in _fields(lines[1:]):
        kept = value
        if name == b"content-length":
            lengths = {part.strip() for part in value.split(b",")}
            given = lengths.pop() if len(lengths) == 1 else b""
            if not _DIGITS.fullmatch(given) or (length is not None and given != length):
                raise HTTPError("connection", f"bad or conflicting Content-Length {value!r}")
            length = kept = given
        elif name == b"transfer-encoding":
            if chunked or value.lower() != b"chunked":
                raise HTTPError("connection", f"unsupported Transfer-Encoding {value!r}")
            chunked = True
        elif name == b"connection":
            if b"close" in {part.strip().lower() for part in value.split(b",")}:
                keep_alive = False
        headers[name.decode("latin-1")] = kept.decode("latin-1")
    return _Head(int(status_line[2]), headers, keep_alive, chunked, int(length) if length else None)


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


EventLoop = Literal["auto", "stamping", "asyncio", "uvloop"]


def run_stamped(
    main: Callable[[Callable[[], float]], Coroutine[Any, Any, T]], *, loop: EventLoop = "auto"
) -> T:
    """Run ``main(clock)`` on a fresh event loop, for callers without one (pytest items); not
    for use inside a running loop. ``clock`` is what the loop stamps reads with.

    `stamping` (asyncio on `StampingSelector`) stamps each read with the time its poll
    returned, so draining a burst of streams does not delay the later streams' stamps; `uvloop`
    has the cheapest reads (it halved the TTFT bias p99 of `stamping` at 256 streams) but
    stamps inside each callback; `auto` takes uvloop when it is installed, else `stamping`.
    `asyncio` is the plain default loop.
    """
    if loop == "auto":
        loop = "uvloop" if _uvloop_factory() is not None else "stamping"
    if loop == "uvloop":
        factory = _uvloop_factory()
        if factory is None:
            raise RuntimeError("loop='uvloop' but the uvloop package is not installed")
        with asyncio.Runner(loop_factory=factory) as runner:
            return runner.run(main(time.perf_counter))
    if loop == "stamping":
        event_loop, clock = stamping_loop()
        with asyncio.Runner(loop_factory=lambda: event_loop) as runner:
            return runner.run(main(clock))
    return asyncio.run(main(time.perf_counter))


def _uvloop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop is optional, so it is looked up at run time rather than imported statically."""
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


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

        A kept connection that the server closes before any byte of the answer gets the
        request again, once, on a new connection: the server closed it as idle (uvicorn's
        keep-alive timeout, 5 s in vLLM) while the request was on its way, so the request was
        never read; a client busy elsewhere for that long reads the close only after it has
        written. A generation request changes nothing on the server, so sending it again is
        safe.
        """
        proto = self._proto
        reused = proto is not None and not proto.closed and proto.keep_alive
        if response is None:
            response = Response()
        head = (
            f"{method} {self.endpoint.prefix}{path} HTTP/1.1\r\n".encode("latin-1")
            + self._fixed
            + f"content-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
        )
        proto = await self._send(head + body, method, response)
        if reused and response.error is not None and proto.dropped:
            response.error = None
            await self._send(head + body, method, response)
        return response

    async def _send(self, message: bytes, method: str, response: Response) -> _Protocol:
        """One attempt, on the kept connection or on a new one if it is closed."""
        proto = self._proto
        if proto is None or proto.closed or not proto.keep_alive:
            if proto is not None and proto.transport is not None:
                proto.transport.close()
            proto = self._proto = await self._connect()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        proto.begin(response, done, method)
        assert proto.transport is not None
        proto.transport.write(message)
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
        return proto

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


def stamped_lines(
    chunks: Sequence[bytes], stamps: Sequence[float]
) -> Iterator[tuple[bytes, float]]:
    """A streamed body's complete lines (server-sent events), each with the arrival time of the
    read that ended it."""
    rest = b""
    for chunk, stamp in zip(chunks, stamps, strict=True):
        parts = (rest + chunk).split(b"\n") if rest else chunk.split(b"\n")
        rest = parts.pop()
        for part in parts:
            yield (part[:-1] if part.endswith(b"\r") else part), stamp
    if rest:
        yield rest, stamps[-1]

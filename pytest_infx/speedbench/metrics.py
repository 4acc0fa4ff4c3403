"""Prometheus snapshots of an engine's speculative-decoding counters, and their deltas.

The text format is tokenised, not grepped: label order differs between client versions, label
values may hold escaped quotes and braces, and an engine runs one label set per engine index or
DP rank, all of which must be summed. The InferenceX collectors grep every label set's value
into one shell variable and subtract in ``awk``: with one label set that is the delta, with
several the ``awk`` program reads the first after-value alone as the delta (nothing before is
subtracted), and a missing series reads as 0. Which series an engine exposes, and how its AL
follows from them, is the engine adapter's (:meth:`EngineAdapter.spec_counters`).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from pytest_infx.engines import registry
from pytest_infx.engines.registry import EngineRegistry
from pytest_infx.engines.spec import LabelSet, SeriesKey, Snapshot, SpecCounters
from pytest_infx.http1 import HTTPError, fetch

__all__ = ["LabelSet", "SeriesKey", "Snapshot", "SpecCounters"]

T = TypeVar("T")


class MetricsParseError(ValueError):
    """Exposition text that is not the Prometheus text format; names the line."""


class ScrapeError(RuntimeError):
    """`/metrics` could not be read (connection, status, or body)."""


class CounterResetError(RuntimeError):
    """A counter went down between two snapshots: the server restarted inside the window."""


def parse_prometheus(text: str) -> Snapshot:
    series: dict[SeriesKey, float] = {}
    first_line: dict[SeriesKey, int] = {}
    types: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line[1:].split(None, 3)
            if len(parts) >= 3 and parts[0] == "TYPE":
                types[parts[1]] = parts[2]
            continue
        name, labels, value = _Sample(line, lineno).parse()
        if name.endswith("_created"):
            continue
        key = (name, labels)
        if key in series:
            raise MetricsParseError(
                f"metrics line {lineno}: series {_shown(key)} repeats line {first_line[key]}; "
                "a scrape gives each series once"
            )
        series[key] = value
        first_line[key] = lineno
    return Snapshot(series=series, types=types)


def _shown(key: SeriesKey) -> str:
    name, labels = key
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels))
    return f"{name}{{{inner}}}" if inner else name


class _Sample:
    """A cursor over one sample line: `name{label="value",...} value [timestamp]`."""

    def __init__(self, line: str, lineno: int) -> None:
        self.s = line
        self.i = 0
        self.lineno = lineno

    def fail(self, what: str) -> MetricsParseError:
        return MetricsParseError(
            f"metrics line {self.lineno}, column {self.i + 1}: {what}: {self.s[:200]!r}"
        )

    def parse(self) -> tuple[str, LabelSet, float]:
        name: str | None = None
        if self.s[0] != "{":
            name = self.identifier(metric=True)
        labels: dict[str, str] = {}
        self.spaces()
        if self.peek() == "{":
            self.i += 1
            name = self.labels(labels, name)
        if name is None:
            raise self.fail("sample without a metric name")
        self.spaces()
        value = self.value()
        self.spaces()
        if self.i < len(self.s):
            stamp = self.token()
            try:
                float(stamp)
            except ValueError:
                raise self.fail(f"bad timestamp {stamp!r}") from None
            self.spaces()
            if self.i < len(self.s):
                raise self.fail("unexpected text after the timestamp")
        return name, frozenset(labels.items()), value

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def spaces(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def identifier(self, *, metric: bool) -> str:
        start = self.i
        s = self.s
        while self.i < len(s) and (
            s[self.i].isalnum() or s[self.i] == "_" or (metric and s[self.i] == ":")
        ):
            self.i += 1
        word = s[start : self.i]
        if not word or word[0].isdigit() or not word.isascii():
            raise self.fail("expected a metric or label name")
        return word

    def quoted(self) -> str:
        if self.peek() != '"':
            raise self.fail("expected a quoted string")
        self.i += 1
        out: list[str] = []
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt == "n":
                    out.append("\n")
                elif nxt in ('"', "\\"):
                    out.append(nxt)
                else:
                    raise self.fail(f"bad escape '\\{nxt}' in a label value")
                self.i += 2
            elif c == '"':
                self.i += 1
                return "".join(out)
            else:
                out.append(c)
                self.i += 1
        raise self.fail("unterminated quoted string")

    def labels(self, labels: dict[str, str], name: str | None) -> str | None:
        """Reads up to `}`; a bare quoted string is the metric name (text format 1.0.0)."""
        while True:
            self.spaces()
            c = self.peek()
            if c == "}":
                self.i += 1
                return name
            if c == '"':
                key = self.quoted()
                self.spaces()
                if self.peek() in (",", "}"):
                    if name is not None:
                        raise self.fail("two metric names")
                    name = key
                    if self.peek() == ",":
                        self.i += 1
                    continue
            elif c:
                key = self.identifier(metric=False)
            else:
                raise self.fail("unterminated label set")
            self.spaces()
            if self.peek() != "=":
                raise self.fail(f"expected '=' after label {key!r}")
            self.i += 1
            self.spaces()
            if key in labels:
                raise self.fail(f"label {key!r} given twice")
            labels[key] = self.quoted()
            self.spaces()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}' in the label set")

    def token(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in " \t":
            self.i += 1
        return self.s[start : self.i]

    def value(self) -> float:
        tok = self.token()
        if not tok:
            raise self.fail("missing sample value")
        if "_" in tok:
            raise self.fail(f"bad sample value {tok!r}")
        try:
            return float(tok)
        except ValueError:
            raise self.fail(f"bad sample value {tok!r}") from None


def spec_counters(
    snapshot: Snapshot, engine: str | None = None, engines: EngineRegistry | None = None
) -> SpecCounters:
    """Read the counters of `engine`, or of whichever engine's series are present."""
    return (engines or registry.installed()).spec_counters(snapshot, engine)


def series_name(counters: SpecCounters | CounterDelta, counter: str) -> str:
    """The Prometheus series behind a counter field, for messages."""
    if counter.startswith("accepted_per_pos["):
        position = counter.removeprefix("accepted_per_pos[").removesuffix("]")
        base = counters.series.get("accepted_per_pos", "accepted_per_pos")
        return f'{base}{{position="{position}"}}'
    return counters.series.get(counter, counter)


@dataclass(frozen=True, slots=True)
class CounterDelta:
    """after - before for each counter, ``None`` where it cannot be known.

    Each fault has its own field, because each has its own cause: ``decreased`` names counters
    that went down (a restart); ``vanished`` the series present before the pass and absent
    after it; ``empty`` the scrape (``before``/``after``) whose body held no sample;
    ``non_finite`` the series read as +Inf/-Inf/NaN, whose difference means nothing.
    """

    engine: str | None
    drafts: float | None
    draft_tokens: float | None
    accepted: float | None
    accepted_per_pos: tuple[float, ...]
    generation_tokens: float | None
    decreased: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    non_finite: tuple[str, ...] = ()
    series: Mapping[str, str] = field(default_factory=dict)
    prefill_in_accepted: bool = False
    """``accepted`` holds one prefill token per request finished in the window."""

    @property
    def reset(self) -> bool:
        return bool(self.decreased)


def delta(before: SpecCounters, after: SpecCounters, *, strict: bool = False) -> CounterDelta:
    """Differences over the window; with `strict`, a counter that went down raises."""
    decreased: list[str] = []
    vanished: list[str] = []
    empty = tuple(when for when, c in (("before", before), ("after", after)) if c.empty)
    engine = after.engine or before.engine
    named = after if after.series else before

    def diff(name: str, b: float | None, a: float | None) -> float | None:
        if empty:
            return None
        if b is not None and a is None:
            vanished.append(f"{series_name(named, name)} (was {b:g})")
            return None
        if b is not None and a is not None and a < b:
            decreased.append(f"{name} {b:g} -> {a:g}")
        if a is None:
            return None
        value = a - (b or 0.0)
        return value if math.isfinite(value) else None

    drafts = diff("drafts", before.drafts, after.drafts)
    draft_tokens = diff("draft_tokens", before.draft_tokens, after.draft_tokens)
    accepted = diff("accepted", before.accepted, after.accepted)
    generation = diff("generation_tokens", before.generation_tokens, after.generation_tokens)
    n = max(len(before.accepted_per_pos), len(after.accepted_per_pos))
    per_pos: list[float] = []
    for i in range(n):
        b = before.accepted_per_pos[i] if i < len(before.accepted_per_pos) else None
        a = after.accepted_per_pos[i] if i < len(after.accepted_per_pos) else None
        d = diff(f"accepted_per_pos[{i}]", b, a)
        per_pos.append(0.0 if d is None else d)
    if accepted is None and generation is not None and drafts is not None:
        accepted = generation - drafts
    result = CounterDelta(
        engine=engine,
        drafts=drafts,
        draft_tokens=draft_tokens,
        accepted=accepted,
        accepted_per_pos=tuple(per_pos),
        generation_tokens=generation,
        decreased=tuple(decreased),
        vanished=tuple(vanished),
        empty=empty,
        non_finite=tuple(dict.fromkeys((*before.non_finite, *after.non_finite))),
        series=named.series,
        prefill_in_accepted=named.prefill_in_accepted,
    )
    if strict and result.reset:
        raise CounterResetError(
            "counters went down between snapshots (server restarted?): "
            + ", ".join(result.decreased)
        )
    return result


def metrics_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/metrics"


async def metrics_text(base_url: str, *, timeout_s: float = 30.0) -> str:
    """The body of the server's ``/metrics``, whatever its format; ScrapeError names the URL and
    what failed."""
    url = metrics_url(base_url)
    try:
        resp = await fetch(base_url, "GET", "/metrics", timeout_s=timeout_s)
    except HTTPError as exc:
        raise ScrapeError(f"GET {url}: {exc}") from None
    text = resp.body.decode("utf-8", "replace")
    if resp.status != 200:
        raise ScrapeError(f"GET {url}: HTTP {resp.status}: {text[:300]}")
    return text


async def scrape(base_url: str, *, timeout_s: float = 30.0) -> Snapshot:
    text = await metrics_text(base_url, timeout_s=timeout_s)
    try:
        return parse_prometheus(text)
    except MetricsParseError as exc:
        raise ScrapeError(f"GET {metrics_url(base_url)}: {exc}") from None


class ScrapeWindow:
    """A pass's counters on an engine whose ``/metrics`` holds Prometheus counters: one scrape
    right before the pass and one right after, so the window holds this pass's traffic (an
    engine that queues per-iteration stats is read by
    :class:`pytest_infx.speedbench.drain.IterationDrain`, which answers the same two calls)."""

    def __init__(self, base_url: str, engine: str | None, engines: EngineRegistry) -> None:
        self.base_url = base_url
        self.engine = engine
        self.engines = engines

    async def read(self) -> SpecCounters:
        return spec_counters(await scrape(self.base_url), self.engine, self.engines)

    async def start(self) -> SpecCounters:
        return await self.read()

    async def during(self, work: Awaitable[T]) -> tuple[T, SpecCounters]:
        result = await work
        return result, await self.read()

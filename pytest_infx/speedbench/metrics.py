"""Prometheus snapshots of an engine's speculative-decoding counters, and their deltas.

The text format is tokenised, not grepped: label order differs between client versions, label
values may hold escaped quotes and braces, and an engine runs one label set per DP rank, all of
which must be summed (the InferenceX collectors read only the first and a missing series as 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from pytest_infx.http1 import HTTPError, fetch

LabelSet = frozenset[tuple[str, str]]
SeriesKey = tuple[str, LabelSet]
Engine = Literal["vllm", "llamacpp", "sglang"]

VLLM = "vllm:spec_decode_"
LLAMACPP = "llamacpp:spec_decode_"
DRAFTS = "num_drafts_total"
DRAFT_TOKENS = "num_draft_tokens_total"
ACCEPTED = "num_accepted_tokens_total"
PER_POS = "num_accepted_tokens_per_pos_total"
SGLANG_VERIFY = "sglang:spec_verify_calls_total"
SGLANG_GENERATION = "sglang:generation_tokens_total"


class MetricsParseError(ValueError):
    """Exposition text that is not the Prometheus text format; names the line."""


class ScrapeError(RuntimeError):
    """`/metrics` could not be read (connection, status, or body)."""


class CounterResetError(RuntimeError):
    """A counter went down between two snapshots: the server restarted inside the window."""


@dataclass(frozen=True, eq=False)
class Snapshot(Mapping[SeriesKey, float]):
    """Every sample of one scrape, keyed by (name, labels); `_created` series are left out."""

    series: Mapping[SeriesKey, float]
    types: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: SeriesKey) -> float:
        return self.series[key]

    def __iter__(self) -> Iterator[SeriesKey]:
        return iter(self.series)

    def __len__(self) -> int:
        return len(self.series)

    def get_series(self, name: str, **labels: str) -> float | None:
        return self.series.get((name, frozenset(labels.items())))

    def total(self, name: str, **match: str) -> float | None:
        """Sum over every label set of `name` that has the `match` labels; None when absent."""
        want = match.items()
        values = [
            v for (n, ls), v in self.series.items() if n == name and all(m in ls for m in want)
        ]
        return math.fsum(values) if values else None

    def by_label(self, name: str, label: str) -> dict[str, float]:
        """Sums of `name` grouped by the value of `label` (per-position counters)."""
        out: dict[str, float] = {}
        for (n, ls), v in self.series.items():
            if n != name:
                continue
            for key, value in ls:
                if key == label:
                    out[value] = out.get(value, 0.0) + v
        return out


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


@dataclass(frozen=True, slots=True)
class SpecCounters:
    """The speculative-decoding counters of one snapshot, summed over label sets.

    None means the series is absent (the server does not speculate), which is not zero. SGLang
    has no accepted-token counter: `drafts` holds its verify calls and `generation_tokens` its
    generated tokens, from which the delta derives the accepted count.
    """

    engine: Engine | None
    drafts: float | None = None
    draft_tokens: float | None = None
    accepted: float | None = None
    accepted_per_pos: tuple[float, ...] = ()
    generation_tokens: float | None = None
    empty: bool = False
    """The scrape held no sample at all (an empty ``/metrics`` body), which says nothing about
    speculation or restarts."""
    non_finite: tuple[str, ...] = ()
    """``name = value`` of each counter series read as +Inf, -Inf or NaN."""

    @property
    def speculating(self) -> bool:
        return self.drafts is not None


def _non_finite(snapshot: Snapshot, names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(
        f"{name} = {value:g}"
        for (name, _), value in snapshot.series.items()
        if name in names and not math.isfinite(value)
    )


def spec_counters(snapshot: Snapshot, engine: Engine | None = None) -> SpecCounters:
    """Read the counters of `engine`, or of whichever engine's series are present."""
    if not snapshot.series:
        return SpecCounters(engine=None, empty=True)
    order: tuple[Engine, ...] = (engine,) if engine is not None else ("vllm", "llamacpp", "sglang")
    for name in order:
        if name == "sglang":
            verify = snapshot.total(SGLANG_VERIFY)
            if verify is not None or engine == "sglang":
                return SpecCounters(
                    engine="sglang" if verify is not None else None,
                    drafts=verify,
                    generation_tokens=snapshot.total(SGLANG_GENERATION),
                    non_finite=_non_finite(snapshot, (SGLANG_VERIFY, SGLANG_GENERATION)),
                )
            continue
        prefix = VLLM if name == "vllm" else LLAMACPP
        drafts = snapshot.total(prefix + DRAFTS)
        if drafts is None and engine is None:
            continue
        per_pos = snapshot.by_label(prefix + PER_POS, "position")
        names = tuple(prefix + n for n in (DRAFTS, DRAFT_TOKENS, ACCEPTED, PER_POS))
        return SpecCounters(
            engine=name if drafts is not None else None,
            drafts=drafts,
            draft_tokens=snapshot.total(prefix + DRAFT_TOKENS),
            accepted=snapshot.total(prefix + ACCEPTED),
            accepted_per_pos=_positions(per_pos),
            non_finite=_non_finite(snapshot, names),
        )
    return SpecCounters(engine=None)


def series_name(engine: Engine | None, counter: str) -> str:
    """The Prometheus series behind a counter field, for messages."""
    if engine == "sglang":
        return {"drafts": SGLANG_VERIFY, "generation_tokens": SGLANG_GENERATION}.get(
            counter, counter
        )
    prefix = LLAMACPP if engine == "llamacpp" else VLLM
    names = {"drafts": DRAFTS, "draft_tokens": DRAFT_TOKENS, "accepted": ACCEPTED}
    if counter.startswith("accepted_per_pos["):
        position = counter.removeprefix("accepted_per_pos[").removesuffix("]")
        return f'{prefix + PER_POS}{{position="{position}"}}'
    return prefix + names[counter] if counter in names else counter


def _positions(per_pos: Mapping[str, float]) -> tuple[float, ...]:
    indexed: dict[int, float] = {}
    for key, value in per_pos.items():
        try:
            indexed[int(key)] = value
        except ValueError:
            continue
    if not indexed:
        return ()
    return tuple(indexed.get(i, 0.0) for i in range(max(indexed) + 1))


@dataclass(frozen=True, slots=True)
class CounterDelta:
    """after - before for each counter, ``None`` where it cannot be known.

    Each fault has its own field, because each has its own cause: ``decreased`` names counters
    that went down (a restart); ``vanished`` the series present before the pass and absent
    after it; ``empty`` the scrape (``before``/``after``) whose body held no sample;
    ``non_finite`` the series read as +Inf/-Inf/NaN, whose difference means nothing.
    """

    engine: Engine | None
    drafts: float | None
    draft_tokens: float | None
    accepted: float | None
    accepted_per_pos: tuple[float, ...]
    generation_tokens: float | None
    decreased: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    non_finite: tuple[str, ...] = ()

    @property
    def reset(self) -> bool:
        return bool(self.decreased)


def delta(before: SpecCounters, after: SpecCounters, *, strict: bool = False) -> CounterDelta:
    """Differences over the window; with `strict`, a counter that went down raises."""
    decreased: list[str] = []
    vanished: list[str] = []
    empty = tuple(when for when, c in (("before", before), ("after", after)) if c.empty)
    engine = after.engine or before.engine

    def diff(name: str, b: float | None, a: float | None) -> float | None:
        if empty:
            return None
        if b is not None and a is None:
            vanished.append(f"{series_name(engine, name)} (was {b:g})")
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
    )
    if strict and result.reset:
        raise CounterResetError(
            "counters went down between snapshots (server restarted?): "
            + ", ".join(result.decreased)
        )
    return result


async def scrape(base_url: str, *, timeout_s: float = 30.0) -> Snapshot:
    url = base_url.rstrip("/") + "/metrics"
    try:
        resp = await fetch(base_url, "GET", "/metrics", timeout_s=timeout_s)
    except HTTPError as exc:
        raise ScrapeError(f"GET {url}: {exc}") from None
    text = resp.body.decode("utf-8", "replace")
    if resp.status != 200:
        raise ScrapeError(f"GET {url}: HTTP {resp.status}: {text[:300]}")
    try:
        return parse_prometheus(text)
    except MetricsParseError as exc:
        raise ScrapeError(f"GET {url}: {exc}") from None

"""The values an engine adapter reads and returns about speculative decoding: a metrics
snapshot, the counters read from it (or one iteration's figures, for an engine that queues
them), one request's own figures, and a forced-acceptance setting.

They sit apart from the adapters and from the benchmark code so both can name them: an adapter
from another package reads its own counters into :class:`SpecCounters` without importing the
client or the scraper.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

LabelSet = frozenset[tuple[str, str]]
SeriesKey = tuple[str, LabelSet]


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

    def non_finite(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """``name = value`` of each series among ``names`` read as +Inf, -Inf or NaN."""
        return tuple(
            f"{name} = {value:g}"
            for (name, _), value in self.series.items()
            if name in names and not math.isfinite(value)
        )


@dataclass(frozen=True, slots=True)
class SpecCounters:
    """The speculative-decoding counters of one snapshot, summed over label sets.

    None means the series is absent (the server does not speculate), which is not zero. An
    engine without an accepted-token counter leaves ``accepted`` None and gives
    ``generation_tokens``, from which the delta derives it as generated - verify steps; that
    count then holds one token per finished request (the first token comes from prefill, not
    from a verify step), which ``prefill_in_accepted`` says.
    """

    engine: str | None
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
    series: Mapping[str, str] = field(default_factory=dict)
    """Counter field -> the Prometheus series it was read from, for messages."""
    prefill_in_accepted: bool = False

    @property
    def speculating(self) -> bool:
        return self.drafts is not None


def json_int(value: object) -> int | None:
    """An integer field of an engine's JSON answer; a bool is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def json_hist(value: object) -> tuple[int, ...]:
    """Counts per position (accepted tokens); what is not a number is left out."""
    if not isinstance(value, list):
        return ()
    return tuple(int(v) for v in value if isinstance(v, int | float) and not isinstance(v, bool))


def positions(per_pos: Mapping[str, float]) -> tuple[float, ...]:
    """Per-position sums keyed by the ``position`` label, as a dense tuple from position 0."""
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
class IterationSpec:
    """One engine iteration's speculative figures, from an engine whose ``/metrics`` is a queue
    of per-iteration stats rather than counters (TensorRT-LLM).

    ``drafts`` counts the requests that verified draft tokens in the iteration, so summed over
    a window the three fields are what :class:`SpecCounters` holds for a counter engine.
    ``iteration`` is the engine's own number, which tells a repeated entry from a new one.
    """

    iteration: int
    drafts: int
    draft_tokens: int
    accepted: int


@dataclass(frozen=True, slots=True)
class RequestSpecMetrics:
    """One request's speculative-decoding figures, in one shape whatever the engine.

    `num_steps` is the request's verify steps; `num_accepted` excludes the bonus token;
    `mean_acceptance_length` is the engine's own per-request AL (bonus included).
    """

    source: str
    num_steps: int
    num_accepted: int
    num_drafted: int | None
    mean_acceptance_length: float | None
    histogram: tuple[int, ...] = ()


def number(value: float) -> str:
    """A value as an engine reads it from text: an integer without ``.0``, else 6 places."""
    rounded = round(value, 6)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


@dataclass(frozen=True, kw_only=True)
class SyntheticSetting:
    """What to add to an engine launch to force an acceptance length: ``--speculative-config``
    keys, environment variables, extra argv, and notes on the engine's own rounding."""

    engine: str
    al: float
    k: int
    spec_config: Mapping[str, object] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Parallelism:
    """The parallel sizes of a point's server other than TP, as InferenceX names its results
    (``pp``, ``dcp``, ``pcp``, ``ep``); 1 where the recipe sets none."""

    pp: int = 1
    dcp: int = 1
    pcp: int = 1
    ep: int = 1

"""The baseline gate: a point's figures against the recent passing rows of the same config and
point on the baseline branch, each metric allowed to move by its tolerance in the direction
that hurts.

One measurement against one earlier row cannot tell a regression from noise: on a shared host
three unslowed runs of a point spread 2x. So the baseline is the median of the last ``window``
passing rows, and a metric fails only when it is beyond its tolerance *and* outside the
history's own spread, median +/- ``k`` times the median absolute deviation (MAD); with fewer
than ``MIN_SPREAD_RUNS`` rows there is no spread to read, and the tolerance alone decides.
A baseline value that is not finite or not positive is no measurement and is never compared
with. How tolerances are written is ``pytest_infx.baseline_tolerance``'s; a move the other
way (faster, lower latency) never fails. The gate also reads the point's whole history on the
baseline branch for a slow drift: a run of consecutive worsenings, each within the tolerance,
that add up past it, which a comparison with the last run alone cannot see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_infx.baseline_tolerance import METRICS, MetricTolerance
from pytest_infx.history.metrics import Metrics

DRIFT_STEPS: Final = 3
"""Consecutive worsenings that make a drift: fewer are too often noise."""

DEFAULT_WINDOW: Final = 10
"""Recent passing rows the baseline is the median of (provisional until measured)."""

DEFAULT_K: Final = 3.0
"""How many MADs from the median a value must lie to be outside the noise (provisional)."""

MIN_SPREAD_RUNS: Final = 3
"""Rows needed before their MAD means anything: two rows' MAD is half their difference."""


def usable(value: float) -> bool:
    """Whether a stored figure can be a baseline: finite and positive (every figure the gate
    reads is a throughput or a latency)."""
    return math.isfinite(value) and value > 0


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def mad(values: Sequence[float]) -> float:
    """The median absolute deviation: a spread that one wild run does not blow up."""
    centre = median(values)
    return median([abs(value - centre) for value in values])


@dataclass(frozen=True)
class Delta:
    """One metric of one point against its baseline: the median of ``runs`` earlier rows and
    their MAD (``spread``, None when too few rows to have one)."""

    metric: str
    baseline: float
    value: float
    tolerance: float | None
    spread: float | None = None
    runs: int = 1
    k: float = DEFAULT_K

    @property
    def change(self) -> float:
        """The relative change, +0.1 for 10 % up; 0 where the baseline is 0."""
        return (self.value - self.baseline) / self.baseline if self.baseline else 0.0

    @property
    def harm(self) -> float:
        """How far the change goes the harmful way (never below 0; a value that is not
        finite is infinitely harmful, never a pass)."""
        if not math.isfinite(self.value):
            return math.inf
        sign = -1.0 if METRICS[self.metric].higher_is_better else 1.0
        return max(0.0, sign * self.change)

    @property
    def beyond_tolerance(self) -> bool:
        return self.tolerance is not None and self.harm > self.tolerance + 1e-12

    @property
    def outside_noise(self) -> bool:
        """Whether the value lies outside median +/- k*MAD; True without a spread to read."""
        if self.spread is None or not math.isfinite(self.value):
            return True
        return abs(self.value - self.baseline) > self.k * self.spread + 1e-12

    @property
    def failed(self) -> bool:
        return self.beyond_tolerance and self.outside_noise

    def describe(self) -> str:
        shown = METRICS[self.metric]
        unit = f" {shown.unit}" if shown.unit else ""
        limit = "" if self.tolerance is None else f", allowed {self.tolerance * 100:g}%"
        of = "" if self.runs == 1 else f" (median of {self.runs} runs)"
        return (
            f"{self.metric} {shown.shown(self.value):.4g}{unit} vs baseline "
            f"{shown.shown(self.baseline):.4g}{unit}{of} ({self.change * 100:+.1f}%{limit})"
        )

    def noise(self) -> str:
        """Where the value lies against the history's spread, for the failure message."""
        if self.spread is None:
            return f"too few baseline runs ({self.runs} < {MIN_SPREAD_RUNS}) to read the noise"
        shown = METRICS[self.metric]
        band = self.k * self.spread
        where = "outside" if self.outside_noise else "inside"
        return (
            f"{where} the baseline's noise, median {shown.shown(self.baseline):.4g} +/- "
            f"{self.k:g}*MAD {shown.shown(band):.4g} over {self.runs} runs"
        )


@dataclass(frozen=True)
class Drift:
    """Consecutive worsenings of one metric, each within its tolerance, adding up past it."""

    metric: str
    steps: int
    start: float
    value: float
    tolerance: float

    @property
    def change(self) -> float:
        return (self.value - self.start) / self.start if self.start else 0.0

    def describe(self) -> str:
        return (
            f"slow drift of {self.metric}: {self.steps} consecutive runs each within "
            f"{self.tolerance * 100:g}%, {self.change * 100:+.1f}% in all"
        )


@dataclass(frozen=True)
class BaselineVerdict:
    """A point's comparison: its baseline run (None when there is none), the deltas and any
    drift."""

    item: str
    baseline_run: str | None
    deltas: tuple[Delta, ...]
    drifts: tuple[Drift, ...] = ()

    @property
    def failed(self) -> tuple[Delta, ...]:
        return tuple(delta for delta in self.deltas if delta.failed)

    @property
    def passed(self) -> bool:
        return not self.failed

    def message(self) -> str:
        if self.baseline_run is None:
            return f"{self.item}: no baseline to compare with; the point passes"
        lines = [
            f"{self.item}: {delta.describe()} beyond its tolerance and {delta.noise()} "
            f"(baseline run {self.baseline_run})"
            for delta in self.failed
        ]
        return "\n".join(lines)

    def to_wire(self) -> dict[str, object]:
        """Plain values for a junit property, which crosses xdist's wire to the summary."""
        return {
            "item": self.item,
            "baseline_run": self.baseline_run,
            "deltas": [
                [d.metric, d.baseline, d.value, d.tolerance, d.spread, d.runs, d.k]
                for d in self.deltas
            ],
            "drifts": [[d.metric, d.steps, d.start, d.value, d.tolerance] for d in self.drifts],
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, object]) -> BaselineVerdict:
        deltas = data.get("deltas")
        drifts = data.get("drifts")
        baseline = data.get("baseline_run")
        return cls(
            item=str(data.get("item", "")),
            baseline_run=None if baseline is None else str(baseline),
            deltas=tuple(
                Delta(
                    str(m),
                    float(b),
                    float(v),
                    None if t is None else float(t),
                    None if spread is None else float(spread),
                    int(runs),
                    float(k),
                )
                for m, b, v, t, spread, runs, k in (deltas if isinstance(deltas, list) else [])
            ),
            drifts=tuple(
                Drift(str(m), int(n), float(s), float(v), float(t))
                for m, n, s, v, t in (drifts if isinstance(drifts, list) else [])
            ),
        )


def compare(
    item: str,
    metrics: Metrics,
    baseline: Metrics | None,
    limits: Sequence[MetricTolerance],
    *,
    baseline_run: str | None,
    history: Sequence[Metrics] = (),
    k: float = DEFAULT_K,
    window: int = DEFAULT_WINDOW,
) -> BaselineVerdict:
    """The point's verdict: each metric both have, with its tolerance where one is set.
    ``history`` is the baseline branch's earlier values, oldest first: its last ``window``
    usable values give the baseline (their median) and the noise (their MAD), and the whole
    of it is read for drift; without a history ``baseline`` alone is the baseline."""
    if baseline is None:
        return BaselineVerdict(item, None, ())
    earlier = [*history] or [baseline]
    allowed = {t.metric: t.fraction for t in limits}
    deltas = []
    for name in METRICS:
        if name not in metrics:
            continue
        recent = [h[name] for h in earlier if name in h and usable(h[name])][-window:]
        if not recent:
            continue
        spread = mad(recent) if len(recent) >= MIN_SPREAD_RUNS else None
        deltas.append(
            Delta(name, median(recent), metrics[name], allowed.get(name), spread, len(recent), k)
        )
    drifts = tuple(
        found
        for t in limits
        if (found := drift(t, [*(h[t.metric] for h in history if t.metric in h)], metrics))
        is not None
    )
    return BaselineVerdict(item, baseline_run, tuple(deltas), drifts)


def drift(limit: MetricTolerance, earlier: Sequence[float], metrics: Metrics) -> Drift | None:
    """A drift ending at this run: the last ``DRIFT_STEPS`` or more steps each worsened the
    metric within its tolerance, and together past it."""
    if limit.metric not in metrics:
        return None
    values = [*(value for value in earlier if usable(value)), metrics[limit.metric]]
    worse = METRICS[limit.metric].higher_is_better
    steps = 0
    index = len(values) - 1
    while index > 0:
        before, after = values[index - 1], values[index]
        if before == 0:
            break
        change = (after - before) / before
        harm = -change if worse else change
        if harm <= 0 or harm > limit.fraction:
            break
        steps += 1
        index -= 1
    if steps < DRIFT_STEPS:
        return None
    found = Drift(limit.metric, steps, values[index], values[-1], limit.fraction)
    harm = -found.change if worse else found.change
    return found if harm > limit.fraction else None

"""The baseline gate: a point's figures against the latest passing row of the same config and
point, each metric allowed to move by its tolerance in the direction that hurts.

How tolerances are written is ``pytest_infx.tolerance``'s; a move the other way (faster,
lower latency) never fails. The gate also reads the point's whole history on the baseline
branch for a slow drift: a run of consecutive worsenings, each within the tolerance, that add
up past it, which a comparison with the last run alone cannot see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_infx.history.metrics import Metrics
from pytest_infx.tolerance import METRICS, Tolerance

DRIFT_STEPS: Final = 3
"""Consecutive worsenings that make a drift: fewer are too often noise."""


@dataclass(frozen=True)
class Delta:
    """One metric of one point against its baseline."""

    metric: str
    baseline: float
    value: float
    tolerance: float | None

    @property
    def change(self) -> float:
        """The relative change, +0.1 for 10 % up; 0 where the baseline is 0."""
        return (self.value - self.baseline) / self.baseline if self.baseline else 0.0

    @property
    def harm(self) -> float:
        """How far the change goes the harmful way (never below 0)."""
        sign = -1.0 if METRICS[self.metric].higher_is_better else 1.0
        return max(0.0, sign * self.change)

    @property
    def failed(self) -> bool:
        return self.tolerance is not None and self.harm > self.tolerance + 1e-12

    def describe(self) -> str:
        shown = METRICS[self.metric]
        unit = f" {shown.unit}" if shown.unit else ""
        limit = "" if self.tolerance is None else f", allowed {self.tolerance * 100:g}%"
        return (
            f"{self.metric} {shown.shown(self.value):.4g}{unit} vs baseline "
            f"{shown.shown(self.baseline):.4g}{unit} ({self.change * 100:+.1f}%{limit})"
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
class Verdict:
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
            f"{self.item}: {delta.describe()} beyond its tolerance (baseline run "
            f"{self.baseline_run})"
            for delta in self.failed
        ]
        return "\n".join(lines)

    def to_wire(self) -> dict[str, object]:
        """Plain values for a junit property, which crosses xdist's wire to the summary."""
        return {
            "item": self.item,
            "baseline_run": self.baseline_run,
            "deltas": [[d.metric, d.baseline, d.value, d.tolerance] for d in self.deltas],
            "drifts": [[d.metric, d.steps, d.start, d.value, d.tolerance] for d in self.drifts],
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, object]) -> Verdict:
        deltas = data.get("deltas")
        drifts = data.get("drifts")
        baseline = data.get("baseline_run")
        return cls(
            item=str(data.get("item", "")),
            baseline_run=None if baseline is None else str(baseline),
            deltas=tuple(
                Delta(str(m), float(b), float(v), None if t is None else float(t))
                for m, b, v, t in (deltas if isinstance(deltas, list) else [])
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
    limits: Sequence[Tolerance],
    *,
    baseline_run: str | None,
    history: Sequence[Metrics] = (),
) -> Verdict:
    """The point's verdict: each metric both have, with its tolerance where one is set;
    ``history`` is the baseline branch's earlier values, oldest first, read for drift."""
    if baseline is None:
        return Verdict(item, None, ())
    allowed = {t.metric: t.fraction for t in limits}
    deltas = tuple(
        Delta(name, baseline[name], metrics[name], allowed.get(name))
        for name in METRICS
        if name in metrics and name in baseline
    )
    drifts = tuple(
        found
        for t in limits
        if (found := drift(t, [*(h[t.metric] for h in history if t.metric in h)], metrics))
        is not None
    )
    return Verdict(item, baseline_run, deltas, drifts)


def drift(limit: Tolerance, earlier: Sequence[float], metrics: Metrics) -> Drift | None:
    """A drift ending at this run: the last ``DRIFT_STEPS`` or more steps each worsened the
    metric within its tolerance, and together past it."""
    if limit.metric not in metrics:
        return None
    values = [*earlier, metrics[limit.metric]]
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

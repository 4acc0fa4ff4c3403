"""``infx trend``: one point's metric over runs, as a table and a picture, with the slow drift
the baseline gate also looks for."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pytest_infx.baseline_tolerance import (
    DEFAULT_TOLERANCES,
    METRICS,
    MetricTolerance,
    metric,
    tolerances,
)
from pytest_infx.history.gate import Drift, drift
from pytest_infx.history.store import Stored

PREFERRED = ("tput_per_gpu", "al", "output_tput_per_gpu")
"""Throughput per GPU where a point has it; a SPEED-Bench cell's AL before its output rate."""
_SINCE = re.compile(r"^(\d+)\s*([dhw])$")
DEFAULT_DRIFT_TOLERANCE = 0.05


def since(text: str, *, now: datetime | None = None) -> datetime:
    """``30d``, ``12h`` or ``2w`` before now, or an ISO date."""
    found = _SINCE.match(text.strip())
    moment = now or datetime.now(UTC)
    if found:
        count, unit = int(found.group(1)), found.group(2)
        size = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}[unit]
        return moment - count * size
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--since {text!r}: give a span such as 30d, 12h or 2w, or a date such as 2026-11-01"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def chosen_metric(rows: Sequence[Stored], asked: str | None) -> str:
    """The metric asked for, else the first of the usual ones the rows have."""
    if asked is not None:
        metric(asked)
        return asked
    have = {name for row in rows for name in row.metrics}
    for name in PREFERRED:
        if name in have:
            return name
    if not have:
        raise ValueError("the rows hold no figures")
    return sorted(have)[0]


@dataclass(frozen=True)
class Trend:
    item: str
    metric: str
    rows: tuple[Stored, ...]
    drift: Drift | None

    def values(self) -> list[float]:
        return [row.metrics[self.metric] for row in self.rows]

    def shown(self) -> list[float]:
        """The values in the metric's display unit (ms for a latency)."""
        scale = METRICS[self.metric].shown
        return [scale(value) for value in self.values()]

    @property
    def label(self) -> str:
        unit = METRICS[self.metric].unit
        return f"{self.metric} ({unit})" if unit else self.metric

    def lines(self) -> list[str]:
        shown = METRICS[self.metric]
        unit = f" ({shown.unit})" if shown.unit else ""
        lines = [f"{self.item}: {self.metric}{unit}, {len(self.rows)} runs"]
        header = ["run", "started (UTC)", "branch", "commit", "status", "value", "change"]
        table = [header]
        previous: float | None = None
        for row in self.rows:
            value = row.metrics[self.metric]
            change = "" if not previous else f"{(value - previous) / previous * 100:+.1f}%"
            table.append(
                [
                    row.run_label,
                    row.started.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
                    row.branch,
                    row.commit[:10],
                    row.status,
                    f"{shown.shown(value):.4g}",
                    change,
                ]
            )
            previous = value if row.passed else previous
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        for row_cells in table:
            cells = (c.ljust(w) for c, w in zip(row_cells, widths, strict=True))
            lines.append("  " + "  ".join(cells).rstrip())
        if self.drift is not None:
            lines.append(f"! {self.drift.describe()}")
        return lines


def trend(item: str, rows: Sequence[Stored], asked: str | None) -> Trend:
    """The item's rows that have the metric; drift is judged on the passing ones, against the
    metric's default tolerance (5 % where there is none)."""
    name = chosen_metric(rows, asked)
    kept = tuple(row for row in rows if name in row.metrics)
    limit = next(
        (t for t in tolerances(DEFAULT_TOLERANCES, source="default") if t.metric == name),
        MetricTolerance(name, DEFAULT_DRIFT_TOLERANCE),
    )
    passing = [row.metrics[name] for row in kept if row.passed]
    found = drift(limit, passing[:-1], {name: passing[-1]}) if passing else None
    return Trend(item, name, kept, found)

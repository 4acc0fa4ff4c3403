"""The history as one self-contained HTML page: per config, InferenceX's pareto chart
(throughput per GPU against interactivity, one frontier per run) and each point's trend.

The charts are SVG written here, with no script and no library to fetch: the page opens from a
CI artifact or a file share as it is, and a browser test can read every drawn point back from
its attributes.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pytest_infx.history.store import Stored
from pytest_infx.history.trend import trend
from pytest_infx.tolerance import METRICS

WIDTH, HEIGHT = 640, 360
TREND_HEIGHT = 200
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 20, 50
COLOURS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#2c7a7b", "#975a16")
X_METRIC = "median_intvty"
Y_METRICS = ("tput_per_gpu", "output_tput_per_gpu")
STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#1a202c}
h2{margin-top:32px;font-size:18px}h3{font-size:14px;margin:16px 0 4px}
svg{background:#fff;border:1px solid #cbd5e0}.muted{color:#718096;font-size:13px}
.axis{stroke:#4a5568}.grid{stroke:#e2e8f0}text{font-size:11px;fill:#2d3748}
.legend{font-size:12px;margin:4px 0 0;display:flex;flex-wrap:wrap;max-width:640px}
.legend .run{margin-right:16px;white-space:nowrap}
"""


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    run: str
    item: str


def chart_key(row: Stored) -> str:
    c = row.config
    return (
        f"{c.get('model_prefix')} {c.get('precision')} {c.get('hardware')} "
        f"{c.get('framework')} {c.get('engine_version')} spec-{c.get('spec_method')} "
        f"({row.kind})"
    )


def frontier(marks: Sequence[Mark]) -> list[Mark]:
    """The pareto frontier: no other mark has both more interactivity and more throughput."""
    best: list[Mark] = []
    for mark in sorted(marks, key=lambda m: (-m.x, -m.y)):
        if not best or mark.y > best[-1].y:
            best.append(mark)
    return sorted(best, key=lambda m: m.x)


def _ticks(low: float, high: float) -> list[float]:
    if high <= low:
        return [low]
    step = (high - low) / 4
    return [low + step * i for i in range(5)]


def _scale(
    low: float, high: float, size: int, start: int, *, flip: bool
) -> Callable[[float], float]:
    span = (high - low) or 1.0

    def place(value: float) -> float:
        share = (value - low) / span
        return start + (size - share * size if flip else share * size)

    return place


def svg(
    marks: Sequence[Mark], *, x_label: str, y_label: str, kind: str, key: str, height: int = HEIGHT
) -> str:
    """One chart; ``kind`` (pareto or trend) decides the lines: each run's frontier, or one
    line through the marks in order."""
    xs = [m.x for m in marks]
    ys = [m.y for m in marks]
    x_low, x_high = min(xs), max(xs)
    y_low, y_high = min(0.0, *ys), max(ys) * 1.05 or 1.0
    if x_low == x_high:
        x_low, x_high = x_low - 1, x_high + 1
    inner_w, inner_h = WIDTH - LEFT - RIGHT, height - TOP - BOTTOM
    sx = _scale(x_low, x_high, inner_w, LEFT, flip=False)
    sy = _scale(y_low, y_high, inner_h, TOP, flip=True)
    parts = [
        f'<svg class="chart {kind}" data-key="{html.escape(key)}" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in _ticks(y_low, y_high):
        y = sy(tick)
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.4g}</text>'
        )
    if kind == "pareto":
        for tick in _ticks(x_low, x_high):
            x = sx(tick)
            parts.append(
                f'<text x="{x:.1f}" y="{height - BOTTOM + 16}" text-anchor="middle">'
                f"{tick:.4g}</text>"
            )
    parts.append(
        f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{height - BOTTOM}" '
        f'y2="{height - BOTTOM}"/><line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" '
        f'y2="{height - BOTTOM}"/>'
        f'<text x="{LEFT + inner_w / 2:.0f}" y="{height - 8}" text-anchor="middle">'
        f"{html.escape(x_label)}</text>"
        f'<text transform="translate(14,{TOP + inner_h / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{html.escape(y_label)}</text>'
    )
    runs = list(dict.fromkeys(m.run for m in marks))
    colour = {run: COLOURS[i % len(COLOURS)] for i, run in enumerate(runs)}
    lines = (
        {run: frontier([m for m in marks if m.run == run]) for run in runs}
        if kind == "pareto"
        else {"all": list(marks)}
    )
    for run, line in lines.items():
        if len(line) > 1:
            points = " ".join(f"{sx(m.x):.1f},{sy(m.y):.1f}" for m in line)
            stroke = colour.get(run, COLOURS[0])
            parts.append(
                f'<polyline class="line" data-run="{html.escape(run)}" points="{points}" '
                f'fill="none" stroke="{stroke}" stroke-width="1.5"/>'
            )
    for mark in marks:
        parts.append(
            f'<circle class="mark" data-run="{html.escape(mark.run)}" '
            f'data-item="{html.escape(mark.item)}" data-x="{mark.x:.6g}" data-y="{mark.y:.6g}" '
            f'cx="{sx(mark.x):.1f}" cy="{sy(mark.y):.1f}" r="4" fill="{colour[mark.run]}">'
            f"<title>{html.escape(mark.item)} run {html.escape(mark.run)}: "
            f"{mark.x:.4g}, {mark.y:.4g}</title></circle>"
        )
    parts.append("</svg>")
    if kind == "pareto":
        keys = "".join(
            f'<span class="run" style="color:{colour[run]}">&#9679; {html.escape(run)}</span>'
            for run in runs
        )
        parts.append(f'<p class="legend">{keys}</p>')
    return "".join(parts)


def _pareto(rows: Sequence[Stored]) -> list[str]:
    groups: dict[str, list[Stored]] = defaultdict(list)
    for row in rows:
        groups[chart_key(row)].append(row)
    parts: list[str] = []
    for key in sorted(groups):
        members = groups[key]
        y_metric = next(
            (m for m in Y_METRICS if all(m in r.metrics for r in members if X_METRIC in r.metrics)),
            None,
        )
        marks = [
            Mark(r.metrics[X_METRIC], r.metrics[y_metric], r.run_label, r.item)
            for r in members
            if y_metric is not None and X_METRIC in r.metrics and y_metric in r.metrics
        ]
        if not marks:
            continue
        assert y_metric is not None
        parts.append(f"<h3>{html.escape(key)}</h3>")
        parts.append(
            svg(
                marks,
                x_label=f"interactivity ({METRICS[X_METRIC].unit}, median)",
                y_label=f"{y_metric} ({METRICS[y_metric].unit})",
                kind="pareto",
                key=key,
            )
        )
    return parts


def _trends(rows: Sequence[Stored]) -> list[str]:
    items: dict[str, list[Stored]] = defaultdict(list)
    for row in rows:
        items[row.item].append(row)
    parts: list[str] = []
    for item in sorted(items):
        found = trend(item, items[item], None)
        marks = [
            Mark(float(index), value, row.run_label, item)
            for index, (row, value) in enumerate(zip(found.rows, found.shown(), strict=True))
        ]
        parts.append(f"<h3>{html.escape(item)}</h3>")
        parts.append(
            svg(
                marks,
                x_label="runs, oldest first",
                y_label=found.label,
                kind="trend",
                key=item,
                height=TREND_HEIGHT,
            )
        )
    return parts


def page(rows: Sequence[Stored], *, source: str) -> str:
    """The whole page for the passing rows given (oldest run first)."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    runs = {row.run_label for row in rows}
    body = [
        "<h1>pytest-infx results history</h1>",
        f'<p class="muted">{html.escape(stamp)}; {len(rows)} passing points of {len(runs)} '
        f"runs from <code>{html.escape(source)}</code></p>",
    ]
    pareto = _pareto(rows)
    body.append('<h2 id="pareto">Throughput per GPU against interactivity</h2>')
    body += pareto or ['<p class="muted">No point has both figures yet.</p>']
    body.append('<h2 id="trends">Trends</h2>')
    body += _trends(rows) or ['<p class="muted">No runs yet.</p>']
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>pytest-infx results history</title><style>{STYLE}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )

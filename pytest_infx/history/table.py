"""The baseline gate's delta table, for the terminal, the markdown step summary and the HTML
report: InferenceX's columns (``compare_results.py``: throughput per GPU, TTFT, interactivity
and E2EL at the median and tails), with units, plus what our gate adds, the tolerance and the
verdict.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from pytest_infx.baseline_tolerance import METRICS, TABLE_METRICS
from pytest_infx.history.gate import BaselineVerdict, Delta


def _shown(delta: Delta) -> list[str]:
    metric = METRICS[delta.metric]
    unit = f" {metric.unit}" if metric.unit else ""
    allowed = "-" if delta.tolerance is None else f"{delta.tolerance * 100:g}%"
    verdict = "FAIL" if delta.failed else ("ok" if delta.tolerance is not None else "")
    return [
        delta.metric + unit.replace(" ", " (", 1) + (")" if unit else ""),
        f"{metric.shown(delta.baseline):.4g}",
        f"{metric.shown(delta.value):.4g}",
        f"{delta.change * 100:+.1f}%",
        allowed,
        verdict,
    ]


def _ordered(verdict: BaselineVerdict) -> list[Delta]:
    order = {name: index for index, name in enumerate(TABLE_METRICS)}
    shown = [d for d in verdict.deltas if d.metric in order or d.tolerance is not None]
    return sorted(shown, key=lambda d: order.get(d.metric, len(order)))


HEADER = ["metric", "baseline", "value", "delta", "allowed", "verdict"]


def text_lines(verdicts: Sequence[BaselineVerdict]) -> list[str]:
    """Per point: its baseline run, then one line per metric."""
    lines: list[str] = []
    for verdict in sorted(verdicts, key=lambda v: v.item):
        if verdict.baseline_run is None:
            lines.append(f"{verdict.item}: no baseline, passes")
            continue
        lines.append(f"{verdict.item}  (baseline run {verdict.baseline_run})")
        rows = [HEADER] + [_shown(delta) for delta in _ordered(verdict)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
        for row in rows:
            cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            lines.append(("  " + "  ".join(cells)).rstrip())
        lines += [f"  ! {drift.describe()}" for drift in verdict.drifts]
    return lines


def markdown(verdicts: Sequence[BaselineVerdict]) -> str:
    """The step summary's section."""
    if not verdicts:
        return ""
    parts = ["### Baseline comparison", ""]
    for verdict in sorted(verdicts, key=lambda v: v.item):
        if verdict.baseline_run is None:
            parts += [f"- `{verdict.item}`: no baseline, passes", ""]
            continue
        parts += [f"`{verdict.item}` against run `{verdict.baseline_run}`", ""]
        parts.append("| " + " | ".join(HEADER) + " |")
        parts.append("|" + "---|" * len(HEADER))
        parts += ["| " + " | ".join(_shown(delta)) + " |" for delta in _ordered(verdict)]
        parts += [f"\n> {drift.describe()}" for drift in verdict.drifts]
        parts.append("")
    return "\n".join(parts) + "\n"


def html_section(verdicts: Sequence[BaselineVerdict]) -> str:
    """The HTML report's section; empty when the run had no baseline gate."""
    if not verdicts:
        return ""
    parts = ['<h2 id="baseline">Baseline comparison</h2>']
    for verdict in sorted(verdicts, key=lambda v: v.item):
        item = html.escape(verdict.item)
        if verdict.baseline_run is None:
            parts.append(f"<p><code>{item}</code>: no baseline, passes</p>")
            continue
        parts.append(
            f"<h3><code>{item}</code> against run "
            f"<code>{html.escape(verdict.baseline_run)}</code></h3>"
        )
        head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
        rows = []
        for delta in _ordered(verdict):
            cells = "".join(f"<td>{html.escape(c)}</td>" for c in _shown(delta))
            style = ' class="fail"' if delta.failed else ""
            rows.append(f"<tr{style}>{cells}</tr>")
        parts.append(f"<table><tr>{head}</tr>{''.join(rows)}</table>")
        parts += [f'<p class="note">{html.escape(d.describe())}</p>' for d in verdict.drifts]
    return "\n".join(parts)

"""Terminal tables of AgentX points, one per recipe, rows TP x concurrency.

Built from result records (not live results), so a table can be redrawn from the result files of
an earlier or remote run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pytest_infx.results.figure import figure
from pytest_infx.results.records import InferencexThroughput, Percentiles, PointRecord

_COLUMNS = (
    "TP",
    "conc",
    "tok/s/GPU",
    "TTFT p50 ms",
    "TTFT p99 ms",
    "TPOT p50 ms",
    "tok/s/user",
    "total tok/s/GPU",
    "errors",
)
_POWER = ("GPU W", "tok/J")
"""Mean GPU power and output tokens per joule, shown where a point has GPU telemetry."""
_NUMERIC = frozenset(_COLUMNS[:-1] + _POWER)


def render_tables(records: Iterable[PointRecord]) -> str:
    """One titled table per recipe; latencies in ms; ``*`` marks a run not valid for submission.

    ``tok/s/GPU`` is output tokens, ``total tok/s/GPU`` input plus output (InferenceX's headline
    figure; ``-`` for a record that only has aiperf's summary figures).
    """
    by_recipe: dict[str, list[PointRecord]] = defaultdict(list)
    for record in records:
        by_recipe[record.recipe].append(record)
    blocks = [_table(recipe, rows) for recipe, rows in sorted(by_recipe.items())]
    return "\n\n".join(blocks)


def _table(recipe: str, records: list[PointRecord]) -> str:
    ordered = sorted(records, key=lambda r: (-r.tp, r.concurrency))
    power = any(record.gpu_telemetry is not None for record in records)
    columns = _COLUMNS[:-1] + (_POWER if power else ()) + _COLUMNS[-1:]
    rows = [_row(record, power=power) for record in ordered]
    widths = [max(len(col), *(len(row[i]) for row in rows)) for i, col in enumerate(columns)]
    lines = [recipe, _line(columns, columns, widths)]
    lines.append(_line(tuple("-" * w for w in widths), columns, widths))
    lines += [_line(row, columns, widths) for row in rows]
    if any(record.submission_valid is False for record in records):
        lines.append("* submission_valid=false (unsafe override: local traces or short duration)")
    return "\n".join(lines)


def _row(record: PointRecord, *, power: bool) -> tuple[str, ...]:
    latency = record.latency_ms
    failed, total = record.requests.failed, record.requests.total
    ratio = failed / total if total else 0.0
    errors = f"{failed}/{total} ({ratio * 100:.1f}%)"
    if record.submission_valid is False:
        errors += " *"
    throughput = record.throughput
    total_per_gpu = (
        throughput.total_tokens_per_s_per_gpu
        if isinstance(throughput, InferencexThroughput)
        else None
    )
    return (
        str(record.tp),
        str(record.concurrency),
        figure(throughput.output_tokens_per_s_per_gpu, 1),
        figure(_p50(latency.ttft), 1),
        figure(None if latency.ttft is None else latency.ttft.p99, 1),
        figure(_p50(latency.tpot), 2),
        figure(record.interactivity_tokens_per_s_per_user, 1),
        figure(total_per_gpu, 1),
        *(_power(record) if power else ()),
        errors,
    )


def _power(record: PointRecord) -> tuple[str, str]:
    telemetry = record.gpu_telemetry
    if telemetry is None:
        return "-", "-"
    return figure(telemetry.mean_power_w, 0), figure(telemetry.output_tokens_per_joule, 2)


def _p50(block: Percentiles | None) -> float | None:
    return None if block is None else block.p50


def _line(cells: tuple[str, ...], columns: tuple[str, ...], widths: list[int]) -> str:
    parts = [
        cell.rjust(width) if column in _NUMERIC else cell.ljust(width)
        for cell, width, column in zip(cells, widths, columns, strict=True)
    ]
    return "  ".join(parts).rstrip()

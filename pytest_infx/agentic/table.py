"""Terminal tables of AgentX points, one per recipe, rows TP x concurrency.

Built from result records (not live results), so a table can be redrawn from the result files of
an earlier or remote run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

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
_NUMERIC = frozenset(_COLUMNS[:-1])


def render_tables(records: Iterable[Mapping[str, Any]]) -> str:
    """One titled table per recipe; latencies in ms; ``*`` marks a run not valid for submission.

    ``tok/s/GPU`` is output tokens, ``total tok/s/GPU`` input plus output (InferenceX's headline
    figure; ``-`` for a record that only has aiperf's summary figures).
    """
    by_recipe: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_recipe[str(record["recipe"])].append(record)
    blocks = [_table(recipe, rows) for recipe, rows in sorted(by_recipe.items())]
    return "\n\n".join(blocks)


def _table(recipe: str, records: list[Mapping[str, Any]]) -> str:
    ordered = sorted(records, key=lambda r: (-int(r["tp"]), int(r["concurrency"])))
    rows = [_row(record) for record in ordered]
    widths = [max(len(col), *(len(row[i]) for row in rows)) for i, col in enumerate(_COLUMNS)]
    lines = [recipe, _line(_COLUMNS, widths), _line(tuple("-" * w for w in widths), widths)]
    lines += [_line(row, widths) for row in rows]
    if any(record.get("submission_valid") is False for record in records):
        lines.append("* submission_valid=false (unsafe override: local traces or short duration)")
    return "\n".join(lines)


def _row(record: Mapping[str, Any]) -> tuple[str, ...]:
    latency = record.get("latency_ms") or {}
    requests = record["requests"]
    failed, total = int(requests["failed"]), int(requests["total"])
    ratio = failed / total if total else 0.0
    errors = f"{failed}/{total} ({ratio * 100:.1f}%)"
    if record.get("submission_valid") is False:
        errors += " *"
    return (
        str(record["tp"]),
        str(record["concurrency"]),
        _fmt(record["throughput"]["output_tokens_per_s_per_gpu"], 1),
        _fmt(_stat(latency.get("ttft"), "p50"), 1),
        _fmt(_stat(latency.get("ttft"), "p99"), 1),
        _fmt(_stat(latency.get("tpot"), "p50"), 2),
        _fmt(record.get("interactivity_tokens_per_s_per_user"), 1),
        _fmt(record["throughput"].get("total_tokens_per_s_per_gpu"), 1),
        errors,
    )


def _stat(block: Mapping[str, float] | None, key: str) -> float | None:
    return None if block is None else block.get(key)


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    parts = [
        cell.rjust(width) if column in _NUMERIC else cell.ljust(width)
        for cell, width, column in zip(cells, widths, _COLUMNS, strict=True)
    ]
    return "  ".join(parts).rstrip()

"""Markdown drift summary of the compared golden curves, for ``$GITHUB_STEP_SUMMARY``.

A reviewer scanning a CI run wants one row per curve (how many cells were checked, how many moved,
by how much at most) and the offending cells spelled out below, not a wall of per-item output.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from pytest_infx.golden.compare import Comparison

STEP_SUMMARY_ENV: Final = "GITHUB_STEP_SUMMARY"


def drift_summary(results: Sequence[Comparison], *, title: str = "Golden AL drift") -> str:
    lines = [f"### {title}", ""]
    if not results:
        lines.append("No golden curve was compared.")
        return "\n".join(lines) + "\n"
    drifted = sum(len(r.drifted) for r in results)
    checked = sum(r.checked for r in results)
    failing = sum(1 for r in results if not r.ok)
    lines.append(
        f"{len(results)} curves, {checked} cells checked, {drifted} drifted; "
        f"{failing} curves out of tolerance."
    )
    lines.extend(
        [
            "",
            "| Curve | Cells checked | Cells drifted | One side only | Largest delta | Tolerance |"
            " Verdict |",
            "|---|---:|---:|---:|---|---:|---|",
        ]
    )
    for result in sorted(results, key=lambda r: r.curve):
        lines.append(
            f"| `{result.curve}` | {result.checked} | {len(result.drifted)} | "
            f"{len(result.missing)} | {_largest(result)} | {result.tolerance:.2f} | "
            f"{'ok' if result.ok else 'drift'} |"
        )
    details = [r for r in sorted(results, key=lambda r: r.curve) if not r.ok]
    for result in details:
        lines.extend(["", f"**{result.curve}**", ""])
        lines.extend(f"- {line}" for line in result.lines())
    return "\n".join(lines) + "\n"


def append_step_summary(
    results: Sequence[Comparison], *, environ: Mapping[str, str] | None = None
) -> Path | None:
    """Append the summary to the file GitHub Actions names, if any; returns that path."""
    env = os.environ if environ is None else environ
    target = env.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(drift_summary(results))
    return path


def _largest(result: Comparison) -> str:
    if result.largest_delta is None or result.largest_at is None:
        return "-"
    mode, k = result.largest_at
    return f"{result.largest_delta:+.2f} (k={k} {mode})"

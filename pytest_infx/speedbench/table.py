"""The end-of-run acceptance-length table of SPEED-Bench cells: one per recipe, a row per
draft length and a column per thinking mode."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_infx.results.records import CellRecord


def _fmt(cell: CellRecord | None) -> str:
    if cell is None:
        return "-"
    text = "FAIL" if cell.al is None else f"{cell.al:.2f}"
    if cell.golden is not None and not cell.golden.ok:
        text += "*"
    return text


def al_tables(records: Iterable[CellRecord]) -> list[str]:
    """One table per recipe: rows are draft lengths, columns thinking modes; a later record of
    a cell stands for an earlier one."""
    by_recipe: dict[str, dict[tuple[int, str], CellRecord]] = {}
    for record in records:
        key = (record.point.draft_length, record.point.thinking)
        by_recipe.setdefault(record.recipe, {})[key] = record
    lines: list[str] = []
    for recipe in sorted(by_recipe):
        cells = by_recipe[recipe]
        modes = sorted({m for _, m in cells}, key=lambda m: m != "thinking_off")
        ks = sorted({k for k, _ in cells})
        lines.append(f"{recipe}  (AL; * = out of golden tolerance, FAIL = cell failed its checks)")
        lines.append("  k  " + "".join(f"{m:>14}" for m in modes))
        for k in ks:
            lines.append(f"  {k:<3}" + "".join(f"{_fmt(cells.get((k, m))):>14}" for m in modes))
    return lines

"""How a measured figure is written in the tables and the report: thousands separated, a fixed
number of places, and ``-`` where there is none, so that a missing figure reads as missing
rather than as zero."""

from __future__ import annotations


def figure(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"

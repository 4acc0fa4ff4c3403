"""What the controller gathers from finished items for the end-of-run tables: each cell's
record by recipe and (k, thinking), and each AgentX point's record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Summary:
    cells: dict[str, dict[tuple[int, str], Mapping[str, Any]]] = field(default_factory=dict)
    agentic: list[Mapping[str, Any]] = field(default_factory=list)

    def add(self, cell: Mapping[str, Any]) -> None:
        self.cells.setdefault(str(cell["recipe"]), {})[(int(cell["k"]), str(cell["thinking"]))] = (
            cell
        )

    @property
    def any_al(self) -> bool:
        return any(c.get("al") is not None for cells in self.cells.values() for c in cells.values())

"""What the controller gathers from finished items for the end-of-run tables: each cell's
record by recipe and (k, thinking), each AgentX point's record and each fixed-seq-len
point's record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.results.records import CellRecord, FixedRecord, PointRecord


@dataclass
class Summary:
    cells: dict[str, dict[tuple[int, str], CellRecord]] = field(default_factory=dict)
    agentic: list[PointRecord] = field(default_factory=list)
    fixed: list[FixedRecord] = field(default_factory=list)

    def add(self, record: CellRecord | PointRecord | FixedRecord) -> None:
        if record.kind == "agentic":
            self.agentic.append(record)
            return
        if record.kind == "fixed_seq_len":
            self.fixed.append(record)
            return
        key = (record.point.draft_length, record.point.thinking)
        self.cells.setdefault(record.recipe, {})[key] = record

    @property
    def any_al(self) -> bool:
        return any(c.al is not None for cells in self.cells.values() for c in cells.values())

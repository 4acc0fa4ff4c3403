"""What the controller gathers from finished items for the end-of-run tables: each kind's
records, in the order their reports came; a kind reads its own (a later record of an item
stands for an earlier one where its table keys them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.results.records import Record


@dataclass
class RecordTally:
    records: dict[str, list[Record]] = field(default_factory=dict)
    """Each kind's records by its name."""

    def add(self, record: Record) -> None:
        self.records.setdefault(record.kind, []).append(record)

    def of(self, kind: str) -> list[Record]:
        """The records of one kind, oldest first."""
        return list(self.records.get(kind, []))

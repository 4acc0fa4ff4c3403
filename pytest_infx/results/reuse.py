"""A stored result that stands for its cell or point in a resumed run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.results.kind import Kinds
    from pytest_infx.results.records import Record


@dataclass(frozen=True)
class Reuse:
    """A passed result file that stands for its cell or point in this run."""

    path: Path
    record: Record

    def figure(self, kinds: Kinds) -> str:
        return kinds.of(self.record).figure(self.record)

    def reason(self, base: Path, kinds: Kinds) -> str:
        try:
            shown = self.path.relative_to(base)
        except ValueError:
            shown = self.path
        return f"reused from {shown}: {self.figure(kinds)}"

"""A stored result that stands for its cell or point in a resumed run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.results.records import Record


@dataclass(frozen=True)
class Reuse:
    """A passed result file that stands for its cell or point in this run."""

    path: Path
    record: Record

    def figure(self) -> str:
        record = self.record
        if record.kind == "speedbench":
            return "passed" if record.al is None else f"AL {record.al:.2f}"
        if record.kind == "fixed_seq_len":
            per_gpu = record.figures.get("output_tput_per_gpu", 0.0)
            return f"{per_gpu:.1f} output tok/s/GPU"
        measured = record.throughput.output_tokens_per_s_per_gpu
        return "passed" if measured is None else f"{measured:.1f} output tok/s/GPU"

    def reason(self, base: Path) -> str:
        try:
            shown = self.path.relative_to(base)
        except ValueError:
            shown = self.path
        return f"reused from {shown}: {self.figure()}"

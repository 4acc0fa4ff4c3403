"""A stored result that stands for its cell or point in a resumed run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENTIC = "agentic"


@dataclass(frozen=True)
class Reuse:
    """A passed result file that stands for its cell or point in this run."""

    path: Path
    record: Mapping[str, Any]

    @property
    def al(self) -> float:
        return float(self.record["al"])

    def figure(self) -> str:
        if self.record.get("kind") != AGENTIC:
            return f"AL {self.al:.2f}"
        value = (self.record.get("throughput") or {}).get("output_tokens_per_s_per_gpu")
        return f"{value:.1f} output tok/s/GPU" if isinstance(value, int | float) else "passed"

    def reason(self, base: Path) -> str:
        try:
            shown = self.path.relative_to(base)
        except ValueError:
            shown = self.path
        return f"reused from {shown}: {self.figure()}"

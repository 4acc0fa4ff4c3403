"""Where every file of a results folder lives.

The folder is read by the resumed run, by ``infx report`` on a copy of it, by dashboards and by
the golden-curve reviewer, so its layout is a contract (README, Results): writers and readers
take their paths from one :class:`Layout` rather than joining names of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

RESULT_SUFFIX: Final = ".json"
MATRIX_SUFFIX: Final = ".al.yaml"
CELLS: Final = "cells"
AGENTIC: Final = "agentic"
FIXED_SEQ_LEN: Final = "fixed-seq-len"
INFERENCEX: Final = "inferencex"
LOGS: Final = "logs"
TELEMETRY: Final = "telemetry"
PLOTS: Final = "plots"
REPORT: Final = "report.html"
DRIFT: Final = "drift-summary.md"
BASELINE: Final = "baseline-summary.md"
PROGRESS_PREFIX: Final = ".progress-"

PlotKind = Literal["al", "agentic", "fixed-seq-len"]


@dataclass(frozen=True)
class Layout:
    """The results folder at ``root`` (``--infx-results``)."""

    root: Path

    @property
    def cells(self) -> Path:
        return self.root / CELLS

    def cell(self, item_id: str) -> Path:
        """A SPEED-Bench cell's result file."""
        return self.cells / f"{item_id}{RESULT_SUFFIX}"

    def cell_files(self, recipe_key: str) -> list[Path]:
        """The cell files of one recipe: its item ids are ``<recipe key>[...]``."""
        if not self.cells.is_dir():
            return []
        return sorted(self.cells.glob(f"{recipe_key}[[]*{RESULT_SUFFIX}"))

    def matrix(self, recipe_key: str) -> Path:
        """A recipe's measured curve in golden format."""
        return self.root / f"{recipe_key}{MATRIX_SUFFIX}"

    @property
    def agentic(self) -> Path:
        return self.root / AGENTIC

    def point(self, item_id: str) -> Path:
        """An AgentX point's result file."""
        return self.agentic / f"{item_id}{RESULT_SUFFIX}"

    def artifacts(self, item_id: str) -> Path:
        """The folder aiperf writes an AgentX point's exports and console log into."""
        return self.agentic / item_id

    def inferencex(self, result_filename: str) -> Path:
        """InferenceX's aggregate of a point, under the file name InferenceX gives it."""
        return self.agentic / INFERENCEX / f"{result_filename}{RESULT_SUFFIX}"

    @property
    def fixed_seq_len(self) -> Path:
        return self.root / FIXED_SEQ_LEN

    def fixed_point(self, item_id: str) -> Path:
        """A fixed-seq-len point's result file."""
        return self.fixed_seq_len / f"{item_id}{RESULT_SUFFIX}"

    def fixed_raw(self, result_filename: str) -> Path:
        """A fixed-seq-len point's raw result, as ``benchmark_serving.py --save-result`` names
        it (InferenceX's ``RESULT_FILENAME``)."""
        return self.fixed_seq_len / INFERENCEX / f"{result_filename}{RESULT_SUFFIX}"

    def fixed_processed(self, result_filename: str) -> Path:
        """The processed result, as ``process_result.py`` names it."""
        return self.fixed_seq_len / INFERENCEX / f"agg_{result_filename}{RESULT_SUFFIX}"

    @property
    def logs(self) -> Path:
        """The server logs, one file per server start."""
        return self.root / LOGS

    def server_log(self, name: str, generation: int) -> Path:
        """One file per start, named after the server: a server restarted under the same key (it
        died) keeps the first start's log beside the new one."""
        return self.logs / f"{name}-{generation}.log"

    def log(self, recorded: str) -> Path:
        """The server log a result file names: in a folder copied elsewhere the recorded
        absolute path is stale, and the log is the file of that name in this ``logs/``."""
        here = self.logs / Path(recorded).name
        return here if here.is_file() else Path(recorded)

    def telemetry(self, item_id: str) -> Path:
        """Every GPU sample taken while a point measured, as CSV."""
        return self.root / TELEMETRY / f"{item_id}.gpu.csv"

    @property
    def plots(self) -> Path:
        return self.root / PLOTS

    def plot(self, recipe_key: str, kind: PlotKind) -> Path:
        return self.plots / f"{recipe_key}.{kind}.png"

    @property
    def report(self) -> Path:
        return self.root / REPORT

    @property
    def drift(self) -> Path:
        """The golden drift table in markdown, also appended to the CI step summary."""
        return self.root / DRIFT

    @property
    def baseline(self) -> Path:
        """The baseline gate's delta table in markdown, also appended to the step summary."""
        return self.root / BASELINE

    def progress(self, run_name: str) -> Path:
        """The live progress files of one run, hidden beside the results they lead to."""
        return self.root / f"{PROGRESS_PREFIX}{run_name}"

    def relative(self, path: Path) -> str:
        """``path`` as the results folder names it (in records and messages), or as it is when
        it lies outside."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def holds_results(self) -> bool:
        return self.cells.is_dir() or self.agentic.is_dir() or self.fixed_seq_len.is_dir()

"""The end-of-run view: an AL table per recipe and a markdown drift summary.

It is built on the controller from what items attach to their reports, so it works the same
with and without xdist and never re-reads files another worker may still be writing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_infx.files.atomic import atomic_write_text
from pytest_infx.plugin.state import RunState
from pytest_infx.results.layout import Layout
from pytest_infx.results.tally import RecordTally

if TYPE_CHECKING:
    from pytest_infx.history.gate import BaselineVerdict
    from pytest_infx.results.kind import Kinds
    from pytest_infx.results.records import CellRecord, Record
from pytest_infx.settings import Environment, environment

SPEEDBENCH = "speedbench"
"""The kind whose cells the drift summary and the AL gate read."""
CELL_PROPERTY = "infx_cell"
AGENTIC_PROPERTY = "infx_agentic"
FIXED_PROPERTY = "infx_fixed_seq_len"
RECORD_PROPERTY = "infx_record"
"""The property a point of a kind another package provides carries its record in (its
``as_json()``), for the end-of-run tables."""
RECORD_PROPERTIES = (CELL_PROPERTY, AGENTIC_PROPERTY, FIXED_PROPERTY, RECORD_PROPERTY)
BASELINE_PROPERTY = "infx_baseline"
"""A point's baseline comparison, put on its item by plugin.run.session's gate."""


def cells_of(summary: RecordTally) -> dict[str, dict[tuple[int, str], CellRecord]]:
    """The SPEED-Bench cells by recipe and (draft length, thinking mode); a later record of a
    cell stands for an earlier one."""
    from pytest_infx.results.records import CellRecord

    cells: dict[str, dict[tuple[int, str], CellRecord]] = {}
    for record in summary.of(SPEEDBENCH):
        if isinstance(record, CellRecord):
            key = (record.point.draft_length, record.point.thinking)
            cells.setdefault(record.recipe, {})[key] = record
    return cells


def al_tables(summary: RecordTally) -> list[str]:
    """One table per recipe: rows are draft lengths, columns thinking modes."""
    from pytest_infx.kinds import KINDS

    return KINDS[SPEEDBENCH].table(summary.of(SPEEDBENCH))


def drift_markdown(summary: RecordTally, this_run: Iterable[str] | None = None) -> str:
    """``this_run`` names the recipes this run measured; the others' rows say they are an
    earlier run's, whose cell files are still in the results folder."""
    ran = None if this_run is None else set(this_run)
    rows = [
        "| recipe | golden curve | cells checked | cells drifted | largest delta | from |",
        "|---|---|---|---|---|---|",
    ]
    details: list[str] = []
    cells = cells_of(summary)
    for recipe in sorted(cells):
        goldens = [c.golden for c in cells[recipe].values() if c.golden is not None]
        if not goldens:
            continue
        checked = sum(g.checked or 0 for g in goldens)
        drifted = [g for g in goldens if not g.ok]
        deltas = [abs(g.largest_delta) for g in goldens if g.largest_delta is not None]
        largest = f"{max(deltas):.2f}" if deltas else "-"
        source = "-" if ran is None else "this run" if recipe in ran else "an earlier run"
        rows.append(
            f"| {recipe} | {goldens[0].curve} | {checked} | {len(drifted)} | {largest} | {source} |"
        )
        details += [f"- {recipe}: {line}" for g in drifted for line in g.lines]
    text = "### Golden AL drift\n\n" + "\n".join(rows) + "\n"
    if details:
        text += "\nOut of tolerance:\n\n" + "\n".join(details) + "\n"
    return text


def write_drift(
    summary: RecordTally,
    results: Path,
    env: Environment | None = None,
    *,
    links: str = "",
    this_run: Iterable[str] | None = None,
) -> Path | None:
    """``links`` (markdown pointing at the sweep report) follows the drift table."""
    compared = any(c.golden for cells in cells_of(summary).values() for c in cells.values())
    if not compared and not links:
        return None
    table = drift_markdown(summary, this_run) if compared else ""
    text = "\n".join(part for part in (table, links) if part)
    return write_markdown(text, Layout(results).drift, env)


def with_folder(summary: RecordTally, results: Path) -> RecordTally:
    """The SPEED-Bench cells of every cell file in the results folder, this run's records over
    them: the drift summary covers the folder as the HTML report does, so a run of another
    marker does not drop the table of the cells an earlier run left. A file that cannot be read
    is left out here; the HTML report names it."""
    from pytest_infx.results.records import CellRecord, RecordError, read_record

    folder = Layout(results).cells
    merged = RecordTally()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = read_record(path)
        except (OSError, RecordError):
            continue
        if isinstance(record, CellRecord):
            merged.add(record)
    for record in summary.of(SPEEDBENCH):
        merged.add(record)
    return merged


def write_markdown(text: str, path: Path, env: Environment | None = None) -> Path:
    """Write a summary section and append it to the CI step summary."""
    atomic_write_text(path, text)
    target = (env or environment()).step_summary
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)
    return path


def records_from(properties: Iterable[tuple[str, object]]) -> list[Record]:
    """The records a report carries; a property that is not one (another plugin's, of the same
    name) is left out of the tables rather than failing the run's end. The record models load
    only for a report that carries one: a lint item's never does."""
    carried = [value for key, value in properties if key in RECORD_PROPERTIES]
    if not carried:
        return []
    from pytest_infx.results.records import RecordError, parse_record

    found = []
    for value in carried:
        try:
            found.append(parse_record(value))
        except RecordError:
            continue
    return found


def verdicts_from(properties: Iterable[tuple[str, object]]) -> list[BaselineVerdict]:
    """The baseline comparisons a report carries."""
    carried = [value for key, value in properties if key == BASELINE_PROPERTY]
    if not carried:
        return []
    from pytest_infx.history.gate import BaselineVerdict

    return [BaselineVerdict.from_wire(value) for value in carried if isinstance(value, dict)]


class SummaryPlugin:
    """Collects the cells of every report on the controller and gates the sweep as a whole."""

    def __init__(
        self, config: pytest.Config, summary: RecordTally, kinds: Callable[[], Kinds]
    ) -> None:
        self.config = config
        self.kinds = kinds
        self.summary = summary
        self.critical: str | None = None
        self.verdicts: list[BaselineVerdict] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            for record in records_from(report.user_properties):
                self.summary.add(record)
            self.verdicts += verdicts_from(report.user_properties)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        links = RunState.of(self.config).report_markdown
        cells = cells_of(self.summary)
        if RunState.of(self.config).worker or not (cells or links):
            return
        from pytest_infx.plugin.options import settings

        found = settings(self.config)
        write_drift(
            with_folder(self.summary, found.results),
            found.results,
            found.env,
            links=links,
            this_run=cells,
        )
        if self.verdicts:
            from pytest_infx.history.table import markdown

            write_markdown(markdown(self.verdicts), Layout(found.results).baseline, found.env)
        if cells and not any(c.al is not None for by in cells.values() for c in by.values()):
            self.critical = "CRITICAL: no SPEED-Bench cell produced an AL value; the sweep fails"
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        for kind in self.kinds():
            records = self.summary.of(kind.name)
            tables = kind.table(records) if records else []
            if tables:
                terminalreporter.write_sep("=", kind.title)
                for line in tables:
                    terminalreporter.write_line(line)
        if self.verdicts:
            from pytest_infx.history.table import text_lines

            terminalreporter.write_sep("=", "infx baseline")
            for line in text_lines(self.verdicts):
                terminalreporter.write_line(line, red=line.rstrip().endswith("FAIL"))
        if self.critical:
            terminalreporter.write_line(self.critical, red=True, bold=True)

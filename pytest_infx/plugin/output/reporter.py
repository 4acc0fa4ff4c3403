"""The pytest side of the sweep report: note what happened to each recipe item, and at the end
of the session, on the controller only, write the HTML report and its pictures.

The report is built from the result files, so the controller needs nothing from the workers but
the test reports xdist already sends it; those also say which items never wrote a file, which
recipe file each item came from (the golden curve of a recipe whose every cell failed is found
there), and, through the user property ``REUSED_PROPERTY`` that ``--infx-resume`` puts on a
reused item, which cells this run took from an earlier one (their files look no different).
The report shows every result in the folder, as ``infx report`` does, this run's marked: a run
of one marker must not hide the cells an earlier run of another left there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_infx.extras import MissingExtra, require
from pytest_infx.plugin.output.summary import verdicts_from
from pytest_infx.plugin.state import RunState

if TYPE_CHECKING:
    from pytest_infx.history.earlier import Earlier
    from pytest_infx.history.gate import BaselineVerdict
    from pytest_infx.report.html import ReportFiles
    from pytest_infx.results.sweep import ItemOutcome, Sweep
    from pytest_infx.settings import Settings

REUSED_PROPERTY = "infx_reused"
RECIPE_MARKERS = ("speedbench", "agentic", "fixed_seq_len")
RECIPE_SUFFIXES = (".yaml", ".yml")
REASON_CHARS = 2000
XDIST_HEADER = re.compile(r"\[gw\d+\] \S+ -- Python ")


def property_of(report: pytest.TestReport, name: str) -> str | None:
    """A user property read from the test report, the one way it reaches the xdist controller."""
    for key, value in report.user_properties:
        if key == name:
            return str(value)
    return None


def _item_id(nodeid: str) -> str:
    return nodeid.rsplit("::", 1)[-1]


def _recipe_of(item_id: str) -> str:
    return item_id.split("[", 1)[0]


def _reason(text: str) -> str:
    """The failure text without xdist's ``[gw0] linux -- Python ...`` line above it."""
    lines = text.splitlines()
    if lines and XDIST_HEADER.match(lines[0]):
        lines = lines[1:]
    return "\n".join(lines)[:REASON_CHARS]


class ReportPlugin:
    """Registered on every process; only the controller writes (workers have ``workerinput``).

    Recipe items are told apart by their node id (a recipe file, then the point) as well as
    their marker: a host project's own Python test may carry the ``speedbench`` marker too.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.outcomes: dict[str, ItemOutcome] = {}
        self.files: ReportFiles | None = None
        self.error: str | None = None
        self.notes: list[str] = []
        self.baseline: list[BaselineVerdict] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.baseline += verdicts_from(report.user_properties)
        recipe_file = report.nodeid.split("::", 1)[0]
        if not recipe_file.endswith(RECIPE_SUFFIXES) or not any(
            marker in report.keywords for marker in RECIPE_MARKERS
        ):
            return
        item_id = _item_id(report.nodeid)
        before = self.outcomes.get(item_id)
        if before is not None and before.outcome != "passed":
            return
        if report.failed:
            outcome = "error" if report.when != "call" else "failed"
        elif report.skipped:
            outcome = "skipped"
        elif report.when == "call" or before is None:
            outcome = "passed"
        else:
            return
        from pytest_infx.results.sweep import ItemOutcome

        reason = _reason(report.longreprtext) if not report.passed else ""
        self.outcomes[item_id] = ItemOutcome(
            id=item_id,
            recipe=_recipe_of(item_id),
            outcome=outcome,
            reason=reason,
            file=recipe_file,
            reused=property_of(report, REUSED_PROPERTY),
        )

    def _curves(self) -> dict[str, str]:
        """Golden curve names from the recipe files, for recipes none of whose cells got one."""
        from pytest_infx.recipes.errors import RecipeError, RecipeErrors
        from pytest_infx.recipes.loader import load_file

        curves: dict[str, str] = {}
        files = {o.recipe: o.file for o in self.outcomes.values() if o.file}
        for recipe, file in files.items():
            try:
                source = load_file(self.config.rootpath / file)
            except (OSError, RecipeError, RecipeErrors):
                continue
            if source.recipe.speedbench is not None:
                curves[recipe] = source.recipe.speedbench.golden
        return curves

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Runs before the drift summary is written, so the step summary can link the report."""
        if RunState.of(self.config).worker or not self.outcomes:
            return
        from pytest_infx.plugin.options import settings
        from pytest_infx.report import html
        from pytest_infx.results.sweep import read_sweep

        options = settings(self.config)
        sweep = read_sweep(
            options.results,
            options.golden,
            curves=self._curves(),
            outcomes=sorted(self.outcomes.values(), key=lambda o: o.id),
        )
        earlier = self._earlier(options, sweep)
        try:
            files = html.write_report(sweep, baseline=self.baseline, earlier=earlier)
        except Exception as exc:
            # the results are already on disk: a report that cannot be drawn must not fail the run
            self.error = f"infx: the sweep report could not be written: {type(exc).__name__}: {exc}"
            return
        self.files = files
        RunState.of(self.config).report_markdown = html.markdown_links(files, options.results)

    def _earlier(self, options: Settings, sweep: Sweep) -> dict[str, Earlier]:
        """Each AgentX and fixed-seq-len point's latest passing result from an earlier run, when
        the results history is on; one that cannot be read draws nothing earlier and says why,
        as the report is no reason to fail a run whose results are written."""
        url = options.history.url
        items = [p.id for r in (*sweep.agentic, *sweep.fixed) for p in r.points]
        if url is None or not items:
            return {}
        try:
            require("sqlalchemy", "alembic", purpose="drawing earlier results")
        except MissingExtra as exc:
            self.notes.append(f"infx report: earlier results not drawn: {exc}")
            return {}
        from sqlalchemy.exc import SQLAlchemyError

        from pytest_infx.history.earlier import earlier_points
        from pytest_infx.history.store import Store, StoreError

        stamp = RunState.of(self.config).history_run or {}
        this_run = stamp.get("run_id")
        try:
            with Store.open(url) as store:
                return earlier_points(
                    store, items, this_run=this_run if isinstance(this_run, str) else None
                )
        except (StoreError, SQLAlchemyError) as exc:
            self.notes.append(f"infx report: earlier results not drawn: {exc}")
            return {}

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.error:
            terminalreporter.write_line(self.error, red=True)
        for note in self.notes:
            terminalreporter.write_line(note, yellow=True)
        files = self.files
        if files is None:
            return
        terminalreporter.write_line(f"infx report: {_shown(files.html)}")
        for picture in files.pictures:
            terminalreporter.write_line(f"infx plot: {_shown(picture)}")
        if files.plots_missing:
            terminalreporter.write_line(f"infx plots: none, {files.plots_missing}")


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

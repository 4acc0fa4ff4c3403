"""Resume an interrupted sweep: a cell that already passed is not run again.

A cell is reused when its result file under ``--infx-results`` (``cells/<item id>.json``, for
AgentX points ``agentic/<item id>.json``) has the point's fingerprint (everything in the recipe
that affects the result, the engine image or command and version included), was measured on the
same dataset or shipped traces (their sha256), and passed (verdict ``pass``, or ``passed`` in
the AgentX files written before the verdict words were made one). Every other cell runs, and
the summary says why. A reused cell still goes through the golden gate with its stored AL (the
golden curve may have changed since), feeds the AL table and rebuilds the recipe's ``.al.yaml``,
so a resumed sweep ends with the same reports as an uninterrupted one; and servers are only
expected by the items that run, so a configuration whose items are all reused never starts.

The decision is made after collection on every process (xdist workers included) from the same
files, before any cell runs, so every worker expects the same server uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.stash as stash
from pytest_infx.plugin.output.reporter import REUSED_PROPERTY, property_of
from pytest_infx.plugin.stash import REUSE
from pytest_infx.results.layout import Layout
from pytest_infx.results.reuse import Reuse

if TYPE_CHECKING:
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point

RERUN_PROPERTY = "infx_rerun"


def judge(path: Path, point: Point, data_sha256: str | None) -> Reuse | str:
    """The stored result to reuse, or why the cell must run (worded to follow a count of
    cells). ``data_sha256`` is the digest of the prompts (SPEED-Bench) or shipped traces
    (AgentX) the point would use now."""
    from pytest_infx.results.records import RecordError, read_record

    try:
        record = read_record(path)
    except FileNotFoundError:
        return "without a result file"
    except (OSError, RecordError) as exc:
        problem = str(exc).removeprefix(f"{path}: ")
        return f"with a result file that is not reusable ({problem})"
    if record.id != point.id or record.kind != point.kind:
        return "with another item's result file"
    if record.fingerprint != point.fingerprint:
        return "whose recipe or engine changed (point fingerprint differs)"
    if record.data_sha256 != data_sha256:
        return "whose dataset changed (sha256 differs)"
    if not record.passed:
        return "that did not pass last time"
    return Reuse(path, record)


def mark(items: Sequence[pytest.Item], layout: Layout, datasets: Datasets) -> None:
    """Stash a :class:`Reuse` on each reusable item and a one-line reason, as a user property,
    on every judged item (the properties reach the controller's summary)."""
    import pytest_infx.plugin.collect.files as collect
    from pytest_infx.plugin.kinds import item_kinds, result_kinds

    for item in items:
        if item.stash.get(stash.PREFLIGHT, []):
            continue
        point = collect.point_of(item)
        if point is None:
            continue
        kinds = result_kinds(item.config)
        path = kinds[point.kind].result_path(layout, point.id)
        data = item_kinds(item.config)[point.kind].data_sha256(point, datasets)
        verdict = judge(path, point, data)
        if isinstance(verdict, Reuse):
            item.stash[REUSE] = verdict
            item.stash[stash.NO_SERVER] = True
            item.user_properties.append((REUSED_PROPERTY, verdict.reason(layout.root, kinds)))
        else:
            item.user_properties.append((RERUN_PROPERTY, verdict))


class ResumePlugin:
    """Shows reused cells as ``reused`` (they pass) and says, at the end, what was reused and
    why the other cells ran."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reused: list[tuple[str, str]] = []
        self.rerun: Counter[str] = Counter()

    def pytest_report_teststatus(
        self, report: pytest.TestReport
    ) -> tuple[str, str, tuple[str, Mapping[str, bool]]] | None:
        if report.when == "call" and report.passed and property_of(report, REUSED_PROPERTY):
            return "reused", "R", ("REUSED", {"green": True})
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        reused = property_of(report, REUSED_PROPERTY)
        if reused is not None:
            self.reused.append((report.nodeid.rsplit("::", 1)[-1], reused))
            return
        rerun = property_of(report, RERUN_PROPERTY)
        if rerun is not None:
            self.rerun[rerun] += 1

    def lines(self) -> list[str]:
        out = [f"{name}: {why}" for name, why in sorted(self.reused)]
        ran = sum(self.rerun.values())
        if self.reused or ran:
            why = "; ".join(f"{n} {reason}" for reason, n in sorted(self.rerun.items()))
            head = f"{_count(len(self.reused))} reused, {ran} run"
            out.append(f"{head}: {why}" if why else head)
        return out

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        lines = self.lines()
        if lines:
            terminalreporter.write_sep("-", "infx resume")
            for line in lines:
                terminalreporter.write_line(line)


def _count(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"

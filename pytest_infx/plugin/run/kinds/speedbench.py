"""The pytest side of a SPEED-Bench cell: run it, keep its results, gate it, and stand in for
it with its stored result when ``--infx-resume`` reuses it.

Results are written before any assertion, so a failed cell still leaves its record (with the
reasons) for the reviewer; the golden comparison runs only for a cell that passed its checks,
because a failed cell has no trustworthy AL.

Collection takes each item's function from this module's kind before any recipe is validated,
so what a cell needs to run (the client, the metrics scraper, the golden curves, the recipe
types) is imported inside the functions that run it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.collect.items as items
import pytest_infx.plugin.options as options
from pytest_infx.plugin.output.summary import CELL_PROPERTY

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_infx.compat.syrupy import SnapshotAssertion
    from pytest_infx.golden.compare import Comparison
    from pytest_infx.golden.curve import Provenance
    from pytest_infx.golden.extension import GoldenDriftError
    from pytest_infx.launch import ServerHandle
    from pytest_infx.plugin.collect.items import Runnable
    from pytest_infx.plugin.run.session import Run
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Cell, Point
    from pytest_infx.results.records import CellRecord, GoldenSummary, Record
    from pytest_infx.results.reuse import Reuse
    from pytest_infx.speedbench.cell import CellOutcome, CellSettings

REBASELINE_OPTION = "infx_rebaseline"


@dataclass
class SpeedbenchCell:
    point: Point
    cell: Cell
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest
    snapshot: SnapshotAssertion

    def died(self, wait_s: float = 5.0) -> str | None:
        """Why the server is gone, if it is: its guard exits a moment after the engine."""
        from pytest_infx.launch import ServerDiedError

        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.run_ctx.pool.check(self.server)
            except ServerDiedError as exc:
                return str(exc)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.2)

    def settings(self) -> CellSettings:
        from pytest_infx.speedbench.cell import CellSettings
        from pytest_infx.speedbench.client import RequestSampling

        cell = self.cell
        bench = cell.bench
        s = bench.sampling
        return CellSettings(
            base_url=self.server.base_url,
            model=self.point.recipe.model.served_name,
            engine=self.point.recipe.engine.name,
            draft_length=cell.draft_length,
            thinking=cell.thinking == "thinking_on",
            chat_template_kwargs=bench.thinking_modes[cell.thinking],
            max_tokens=bench.output_len,
            concurrency=bench.concurrency,
            sampling=RequestSampling(
                temperature=s.temperature,
                top_p=s.top_p,
                top_k=s.top_k,
                seed=s.seed,
                presence_penalty=s.presence_penalty,
            ),
            request_timeout_s=bench.request_timeout,
            engines=self.run_ctx.engines,
        )

    def run(self) -> None:
        __tracebackhide__ = True
        from pytest_infx.results.passes import median_index
        from pytest_infx.speedbench import curves
        from pytest_infx.speedbench.cell import run_cell
        from pytest_infx.speedbench.kind import KIND
        from pytest_infx.speedbench.metrics import ScrapeError
        from pytest_infx.speedbench.record import cell_record, engine_info, with_passes

        point = self.point
        dataset = self.run_ctx.datasets.get(self.cell.bench, str(point.path))
        tracker = self.run_ctx.progress
        repeats = self.cell.bench.repeats or self.run_ctx.settings.history.repeats
        outcomes: list[CellOutcome] = []
        try:
            with (
                self.run_ctx.measuring(self.server, self.point),
                tracker.doing("cell", point.id, total=len(dataset.rows) * repeats),
            ):
                for _ in range(repeats):
                    outcomes.append(
                        run_cell(
                            self.settings(),
                            dataset,
                            on_done=lambda r: tracker.request_done(r.completion_tokens, ok=r.ok),
                        )
                    )
        except ScrapeError as exc:
            why = self.died() or f"server log: {self.server.log_path}"
            message = f"metrics scrape failed: {exc}\n{why}"
            raise pytest.fail.Exception(message, pytrace=False) from None
        engine = engine_info(point)
        records = [cell_record(point, self.server, each, engine, None) for each in outcomes]
        passes = [KIND.metrics(each) for each in records]
        chosen = median_index(passes, "al")
        chosen = next((i for i, each in enumerate(outcomes) if each.reasons), chosen)
        outcome = outcomes[chosen]

        def made(golden: GoldenSummary | None) -> CellRecord:
            record = cell_record(point, self.server, outcome, engine, golden)
            return record if repeats == 1 else with_passes(record, passes)

        record = made(None)
        header = curves.provenance(point, record.dataset, engine)
        drift: GoldenDriftError | None = None
        if record.al is not None:
            drift, golden = gate(
                point,
                self.cell,
                record.al,
                outcome.summary.standard_error,
                header,
                self.snapshot,
                self.request,
            )
            record = made(golden)
        record = self.run_ctx.keep(record, point)
        curves.write_matrix(self.run_ctx.layout, point, header)
        attach(self.request.node, point, record)
        if outcome.reasons:
            pytest.fail(
                f"{point.id} failed its checks:\n"
                + "\n".join(f"  - {r}" for r in outcome.reasons)
                + f"\nserver log: {self.server.log_path}",
                pytrace=False,
            )
        if drift is not None:
            raise pytest.fail.Exception(str(drift), pytrace=False) from None
        self.run_ctx.gate(self.request.node, record, point)


@dataclass
class ReusedCell:
    """Stands in for a SPEED-Bench cell whose stored result is reused: no server, no requests."""

    point: Point
    cell: Cell
    reuse: Reuse
    run_ctx: Run
    request: pytest.FixtureRequest
    snapshot: SnapshotAssertion

    def run(self) -> None:
        __tracebackhide__ = True
        from pytest_infx.results.records import CellRecord
        from pytest_infx.speedbench import curves

        stored = self.reuse.record
        assert isinstance(stored, CellRecord) and stored.al is not None
        header = curves.provenance(self.point, stored.dataset, stored.engine)
        drift, golden = gate(
            self.point,
            self.cell,
            stored.al,
            stored.al_standard_error,
            header,
            self.snapshot,
            self.request,
        )
        record = stored.model_copy(update={"golden": golden})
        curves.write_matrix(self.run_ctx.layout, self.point, header)
        attach(self.request.node, self.point, record)
        if drift is not None:
            raise pytest.fail.Exception(str(drift), pytrace=False) from None


def gate(
    point: Point,
    cell: Cell,
    al: float,
    standard_error: float | None,
    header: Provenance,
    snapshot: SnapshotAssertion,
    request: pytest.FixtureRequest,
) -> tuple[GoldenDriftError | None, GoldenSummary]:
    """Compare one cell's AL with its golden curve; the drift (raised by the caller after the
    results are written) and the summary that goes into the result file and the tables."""
    from pytest_infx.golden.curve import Curve
    from pytest_infx.golden.extension import GoldenDriftError, assert_curve
    from pytest_infx.speedbench import curves

    bench = cell.bench
    measured = Curve(
        name=bench.golden,
        model_key=curves.model_key(point),
        modes={cell.thinking: {cell.draft_length: al}},
        header=header,
    )
    comparison: Comparison | None = None
    drift: GoldenDriftError | None = None
    try:
        comparison = assert_curve(
            snapshot,
            measured,
            tolerance=bench.tolerance,
            stderr={(cell.thinking, cell.draft_length): standard_error} if standard_error else None,
            partial=True,
            rebaseline=bool(request.config.getoption(REBASELINE_OPTION, False)),
            folder=options.settings(request.config).golden,
        )
    except GoldenDriftError as exc:
        drift, comparison = exc, exc.comparison
    from pytest_infx.speedbench.record import golden_summary

    return drift, golden_summary(bench.golden, comparison, passed=drift is None)


def attach(node: pytest.Item, point: Point, record: Record) -> None:
    """The junit properties and the cell the end-of-run tables are built from."""
    from pytest_infx.results.records import CellRecord

    assert isinstance(record, CellRecord)
    node.user_properties += [
        ("al", record.al),
        ("al_token_weighted", record.al_token_weighted),
        ("al_request_weighted", record.al_request_weighted),
        ("al_standard_error", record.al_standard_error),
        ("requests", f"{record.requests.completed}/{record.requests.total}"),
        (CELL_PROPERTY, record.as_json()),
    ]


def cell_of(point: Point) -> Cell:
    """The SPEED-Bench settings of a point the speedbench fixture was given."""
    cell = point.cell
    if cell is None:
        raise TypeError(f"{point.id} is an AgentX point, not a SPEED-Bench cell")
    return cell


class SpeedbenchItems:
    """A SPEED-Bench cell: AL of one draft length and thinking mode against a golden curve."""

    name = "speedbench"

    @property
    def function(self) -> Callable[..., None]:
        return items.speedbench_cell

    def fresh(
        self, point: Point, server: ServerHandle, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        snapshot = request.getfixturevalue("snapshot")
        return SpeedbenchCell(point, cell_of(point), server, run, request, snapshot)

    def reused(
        self, point: Point, reuse: Reuse, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        snapshot = request.getfixturevalue("snapshot")
        return ReusedCell(point, cell_of(point), reuse, run, request, snapshot)

    def attach(self, node: pytest.Item, point: Point, record: Record) -> None:
        attach(node, point, record)

    def data_sha256(self, point: Point, datasets: Datasets) -> str | None:
        return datasets.get(cell_of(point).bench, str(point.path)).sha256


SPEEDBENCH = SpeedbenchItems()

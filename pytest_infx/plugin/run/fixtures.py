"""Fixtures that give recipe items their point, their server and their results.

The session object (``infx_run``) owns what is shared: the server pool (one per pytest run,
shared by xdist workers through files and kernel locks), the embedded engine, loaded datasets
and the results folder. Items only ask for "the server of my point".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.collect.files as collect
import pytest_infx.plugin.kinds as kinds
import pytest_infx.plugin.options as options
from pytest_infx.plugin.run.kinds import ADAPTERS, ItemKind, Runnable
from pytest_infx.plugin.run.session import Run
from pytest_infx.plugin.stash import PREFLIGHT, REF, REUSE
from pytest_infx.plugin.state import RunState

if TYPE_CHECKING:
    from pytest_infx.history.gate import BaselineVerdict
    from pytest_infx.launch import ServerHandle
    from pytest_infx.recipes.points import Point


@pytest.fixture(scope="session")
def infx_run(pytestconfig: pytest.Config) -> Iterator[Run]:
    from pytest_infx.prepare.preflight import Datasets

    settings = options.settings(pytestconfig)
    folders = RunState.of(pytestconfig).folders
    assert folders is not None, "configure makes the run folders before any fixture"
    datasets = Datasets(settings.dataset_dir)
    run = Run(pytestconfig, settings, folders, datasets, lambda: kinds.result_kinds(pytestconfig))
    yield run
    run.close()


@pytest.fixture
def infx_point(request: pytest.FixtureRequest) -> Point:
    """The benchmark point of the current recipe item."""
    point = collect.point_of(request.node)
    if point is None:
        raise pytest.UsageError(f"{request.node.nodeid} is not a pytest-infx recipe item")
    problems = request.node.stash.get(PREFLIGHT, [])
    if problems:
        pytest.fail(
            "preflight failed (no server was started):\n" + "\n".join(problems), pytrace=False
        )
    return point


@pytest.fixture
def infx_server(
    request: pytest.FixtureRequest, infx_point: Point, infx_run: Run
) -> Iterator[ServerHandle]:
    """A live server for this point, shared with the items of the same launch configuration."""
    from pytest_infx.launch.process import ServerStartError
    from pytest_infx.launch.staging import StagingError

    ref = request.node.stash[REF]
    server = ref.server
    try:
        handle = infx_run.acquire(infx_point, server, collect.server_label(request.config, ref))
    except (ServerStartError, StagingError) as exc:
        message = f"server for {infx_point.id} did not start:\n{exc}"
        raise pytest.fail.Exception(message, pytrace=False) from None
    yield handle
    infx_run.release(server)


def runnable(kind: ItemKind, point: Point, run: Run, request: pytest.FixtureRequest) -> Runnable:
    """The point's runnable; one whose stored result is reused (``--infx-resume``) asks for no
    server."""
    reuse = request.node.stash.get(REUSE, None)
    if reuse is not None:
        record = reuse.record
        judged = run.history.judge(record, point)
        run.history.put_missing(record, judged)
        return Gated(kind.reused(point, reuse, run, request), run, request.node, point, judged)
    return kind.fresh(point, request.getfixturevalue("infx_server"), run, request)


@dataclass
class Gated:
    """A reused point judged by the baseline gate like a measured one, so a resumed folder of
    a gate-failed sweep fails again rather than turning green."""

    reused: Runnable
    session: Run
    node: pytest.Item
    point: Point
    judged: BaselineVerdict | None

    def run(self) -> None:
        __tracebackhide__ = True
        self.reused.run()
        if self.judged is not None:
            record = self.node.stash[REUSE].record
            self.session.gate(self.node, record, self.point, self.judged)


GOLDEN_EXTRA = (
    "the golden gate of SPEED-Bench cells needs syrupy, which pytest-infx installs only with "
    "its golden extra: pip install 'pytest-infx[golden]'"
)


@pytest.fixture
def infx_speedbench(request: pytest.FixtureRequest) -> Runnable:
    """The SPEED-Bench cell, whose AL is gated on the golden curve through syrupy's ``snapshot``
    (the AgentX fixture needs none). syrupy is an extra, so that installing pytest-infx does not
    load syrupy's plugin into every other project's runs; without it the cell says what to
    install, before its preflight (whose advice would name syrupy's options)."""
    if not request.config.pluginmanager.has_plugin("syrupy"):
        pytest.fail(GOLDEN_EXTRA, pytrace=False)
    point = request.getfixturevalue("infx_point")
    return runnable(ADAPTERS["speedbench"], point, request.getfixturevalue("infx_run"), request)


@pytest.fixture
def infx_runnable(infx_point: Point, infx_run: Run, request: pytest.FixtureRequest) -> Runnable:
    """The point of every kind but SPEED-Bench's, measured or reused as its kind says; it asks
    for no golden snapshot, which only a SPEED-Bench cell is gated on (``infx_speedbench``)."""
    found = kinds.item_kinds(request.config)[infx_point.kind]
    return runnable(found, infx_point, infx_run, request)

"""The Slurm scheduler on xdist's protocol, driven as xdist's DSession drives it, with workers
that die together, register before they collect, or die between two sends."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_infx.compat.xdist import GatewaySpec
from pytest_infx.plugin.slurm.schedule import ServerGroupScheduling

IDS = [f"r.yaml::s{s}[k{s}-{mode}]@infx-s{s}" for s in range(4) for mode in ("off", "on")]


class Gateway:
    def __init__(self, name: str) -> None:
        self.id = name
        self.spec = cast(GatewaySpec, SimpleNamespace(id=name, python=None))


class Worker:
    """xdist's WorkerController as the scheduler drives it (:class:`WorkerNode`)."""

    def __init__(self, name: str, *, dead: bool = False) -> None:
        self.gateway = Gateway(name)
        self.config = cast(pytest.Config, SimpleNamespace())
        self.workerinput: dict[str, Any] = {}
        self.dead = dead
        self.sent: list[list[int]] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: Sequence[int]) -> None:
        if self.dead:
            raise OSError("cannot send to <Channel id=3 closed>")
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True


class Hooks:
    def __init__(self) -> None:
        self.reports: list[Any] = []

    def pytest_collectreport(self, report: Any) -> None:
        self.reports.append(report)


def scheduler() -> ServerGroupScheduling:
    return ServerGroupScheduling(SimpleNamespace(hook=Hooks()))  # type: ignore[arg-type]


def started(sched: ServerGroupScheduling, *names: str) -> list[Worker]:
    workers = [Worker(name) for name in names]
    for worker in workers:
        sched.add_node(worker)
        sched.add_node_collection(worker, IDS)
    sched.schedule()
    return workers


def test_two_jobs_ending_together_fail_their_running_items_and_requeue_the_rest() -> None:
    sched = scheduler()
    gw0, gw1 = started(sched, "gw0", "gw1")
    assert (gw0.sent, gw1.sent) == ([[0, 1]], [[2, 3]])
    gw2 = Worker("gw2")
    sched.add_node(gw2)
    assert sched.remove_node(gw0) == IDS[0]
    assert sched.remove_node(gw1) == IDS[2]
    assert list(sched.workqueue) == ["infx-s1", "infx-s0", "infx-s2", "infx-s3"]
    assert not sched.tests_finished and sched.has_pending
    sched.add_node_collection(gw2, IDS)
    sched.schedule()
    assert gw2.sent == [[3], [1]]
    sched.mark_test_complete(gw2, 3)
    assert gw2.sent == [[3], [1], [4, 5]]


def test_a_send_to_a_worker_whose_job_just_died_keeps_the_unit_queued() -> None:
    sched = scheduler()
    _, gw1 = started(sched, "gw0", "gw1")
    gw1.dead = True
    sched.mark_test_complete(gw1, 2)
    assert gw1.sent == [[2, 3]]
    assert list(sched.workqueue) == ["infx-s2", "infx-s3"]
    assert sched.remove_node(gw1) == IDS[3]


def test_the_last_unit_sent_tells_the_worker_to_stop() -> None:
    sched = scheduler()
    (gw0,) = started(sched, "gw0")
    for index in range(len(IDS)):
        sched.mark_test_complete(gw0, index)
        assert gw0.shutting_down == (not sched.workqueue)
    assert gw0.sent == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert gw0.shutting_down and sched.tests_finished and not sched.has_pending


def test_a_worker_with_another_collection_gets_no_work() -> None:
    sched = scheduler()
    started(sched, "gw0")
    odd = Worker("gw1")
    sched.add_node(odd)
    sched.add_node_collection(odd, IDS[:-1])
    sched.schedule()
    assert odd.sent == [] and odd.shutting_down
    (report,) = cast(Hooks, sched.config.hook).reports
    assert report.failed and "Different tests were collected between gw0 and gw1" in str(
        report.longrepr
    )

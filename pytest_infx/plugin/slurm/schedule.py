"""xdist's scheduling protocol for Slurm workers, which die and are replaced mid-run.

A unit of work is one server's items (the ``@group`` suffix xdist's loadgroup adds to the node
ids), so a server is never started twice on two nodes. The scheduler is written against the
protocol xdist's ``DSession`` drives (``add_node``, ``add_node_collection``, ``schedule``,
``mark_test_complete``, ``remove_node`` and the properties) rather than by subclassing one of
xdist's schedulers: any number of jobs can end together, a replacement can register before it
has collected, and a send to a worker whose job just died must not stop the run.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import pytest

from pytest_infx.compat.xdist import WorkerNode, collection_diff

Unit = dict[str, bool]
"""One server's items, each with whether it is done (passed, failed or lost with its job)."""


def group_of(nodeid: str) -> str:
    """The server group xdist's loadgroup wrote into the id (``...@group``), else the id."""
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return nodeid.split("@")[-1]
    return nodeid


def pending_of(work: dict[str, Unit]) -> int:
    return sum(not done for unit in work.values() for done in unit.values())


def first_pending(work: dict[str, Unit]) -> str | None:
    """The item a worker was running when it died: the first of its workload not done."""
    for unit in work.values():
        for nodeid, done in unit.items():
            if not done:
                return nodeid
    return None


class ServerGroupScheduling:
    """Units go to workers that have collected; a worker holds two items at a time, because
    xdist's worker runs an item only once it holds the next one or was told to stop.

    A worker's death fails its running item once instead of also running it again elsewhere:
    that item may be what ended the job (its time limit, its memory), and a rerun would report
    one id both failed and passed. The job's other items go back to the front of the queue.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.collection: list[str] | None = None
        self.workqueue: OrderedDict[str, Unit] = OrderedDict()
        self.assigned: dict[WorkerNode, dict[str, Unit]] = {}
        self.collections: dict[WorkerNode, list[str]] = {}
        self.unusable: set[WorkerNode] = set()
        self.dropped: set[str] = set()
        self.pending_ended: Callable[[object], None] | None = None

    @property
    def nodes(self) -> list[WorkerNode]:
        return list(self.assigned)

    @property
    def collection_is_completed(self) -> bool:
        """Scheduling starts with the first worker that collected: a job still queued must not
        hold up the others."""
        return self.collection is not None

    @property
    def tests_finished(self) -> bool:
        if self.collection is None or self.workqueue:
            return False
        return all(pending_of(work) < 2 for work in self.assigned.values())

    @property
    def has_pending(self) -> bool:
        return bool(self.workqueue) or any(pending_of(w) for w in self.assigned.values())

    def add_node(self, node: WorkerNode) -> None:
        self.assigned.setdefault(node, {})

    def add_node_collection(self, node: WorkerNode, collection: Sequence[str]) -> None:
        ids = list(collection)
        if self.collection is not None and ids != self.collection:
            first = next(iter(self.collections), None)
            name = first.gateway.id if first is not None else "first worker"
            message = collection_diff(self.collection, ids, name, node.gateway.id)
            self.config.hook.pytest_collectreport(
                report=pytest.CollectReport(node.gateway.id, "failed", message, [])
            )
            self.unusable.add(node)
            node.shutdown()
            return
        self.collections[node] = ids
        if self.collection is None:
            self.collection = ids
            for nodeid in ids:
                self.workqueue.setdefault(group_of(nodeid), {})[nodeid] = False

    def schedule(self) -> None:
        for node in self.nodes:
            self._fill(node)

    def mark_test_complete(self, node: WorkerNode, item_index: int, duration: float = 0) -> None:
        nodeid = self.collections[node][item_index]
        self.assigned[node][group_of(nodeid)][nodeid] = True
        self._fill(node)

    def mark_test_pending(self, item: str) -> None:
        raise NotImplementedError("only work stealing moves single items")

    def remove_pending_tests_from_node(self, node: object, indices: Sequence[int]) -> None:
        """xdist's ``unscheduled`` event: only work stealing sends one with items. A replacement
        that could not start sends one with none, so that its end is handled here, on the
        controller's thread, between two events of the live workers."""
        if indices or node in self.assigned or self.pending_ended is None:
            raise NotImplementedError("only work stealing takes items back")
        self.pending_ended(node)

    def remove_node(self, node: WorkerNode) -> str | None:
        """The item the node was running when it ended, failed once; None when it was idle."""
        work = self.assigned.pop(node, {})
        self.collections.pop(node, None)
        self.unusable.discard(node)
        crashed = first_pending(work)
        if crashed is None:
            return None
        work[group_of(crashed)][crashed] = True
        back = [(g, u) for g, u in work.items() if not all(u.values())]
        for group, unit in reversed(back):
            self.workqueue[group] = unit
            self.workqueue.move_to_end(group, last=False)
        for other in self.nodes:
            self._fill(other)
        return crashed

    def drop_queued(self) -> list[str]:
        """Take every item no worker holds out of the queue (nobody is left to run them)."""
        ids = [n for unit in self.workqueue.values() for n, done in unit.items() if not done]
        self.workqueue.clear()
        self.dropped.update(ids)
        return ids

    def _fill(self, node: WorkerNode) -> None:
        """Give the node units until it holds two items; tell it to stop when none are left."""
        if node.shutting_down or node not in self.collections or node in self.unusable:
            return
        work = self.assigned[node]
        while self.workqueue and pending_of(work) < 2:
            group, unit = self.workqueue.popitem(last=False)
            indices = [self.collections[node].index(n) for n, done in unit.items() if not done]
            try:
                node.send_runtest_some(indices)
            except (OSError, ValueError):
                self.workqueue[group] = unit
                self.workqueue.move_to_end(group, last=False)
                return
            work[group] = unit
        if not self.workqueue:
            node.shutdown()

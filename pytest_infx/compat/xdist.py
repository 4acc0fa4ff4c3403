"""pytest-xdist's internals that the Slurm workers touch (see
:mod:`pytest_infx.compat.versions`).

xdist documents its hooks and its scheduling protocol; replacing a dead worker without blocking
the controller needs its ``DSession`` (the controller's plugin object) itself, behind
:class:`XdistSession`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pytest
from xdist.report import report_collection_diff

__all__ = ["GatewaySpec", "WorkerNode", "XdistSession", "collection_diff", "worker_python"]


class GatewaySpec(Protocol):
    """execnet's ``XSpec`` of a worker, as far as pytest-infx reads and sets it."""

    id: str | None
    python: str | None


class Gateway(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def spec(self) -> GatewaySpec: ...


class WorkerNode(Protocol):
    """xdist's ``WorkerController``: the ``node`` its hooks and its scheduling protocol pass,
    with the attributes and calls pytest-infx uses."""

    @property
    def gateway(self) -> Gateway: ...

    @property
    def config(self) -> pytest.Config: ...

    @property
    def workerinput(self) -> dict[str, Any]: ...

    @property
    def shutting_down(self) -> bool: ...

    def send_runtest_some(self, indices: Sequence[int]) -> None: ...

    def shutdown(self) -> None: ...


class XdistSession:
    """The running xdist controller (its ``DSession``), as far as replacing workers needs it."""

    def __init__(self, dsession: Any) -> None:
        self._dsession = dsession

    @classmethod
    def of(cls, config: pytest.Config) -> XdistSession | None:
        dsession = config.pluginmanager.getplugin("dsession")
        return None if dsession is None else cls(dsession)

    def replace_clone(self, clone: Callable[[WorkerNode], object]) -> None:
        """Replaces how the controller starts a replacement worker for a dead one."""
        self._dsession._clone_node = clone

    def new_worker_id(self, node: WorkerNode) -> GatewaySpec:
        """The gateway spec of ``node`` under a fresh worker id, as xdist's own clone makes it."""
        spec = node.gateway.spec
        spec.id = None
        self._dsession.nodemanager.group.allocate_id(spec)
        return spec

    def start_worker(self, spec: GatewaySpec) -> WorkerNode:
        """Starts a worker from ``spec`` (blocking until its interpreter answers)."""
        node: WorkerNode = self._dsession.nodemanager.setup_node(spec, self._dsession.queue.put)
        return node

    def unscheduled(self, node: object) -> None:
        """Tells the controller's loop that ``node`` gave back its work (none)."""
        self._dsession.queue.put(("unscheduled", {"node": node, "indices": []}))

    def add_active(self, node: object) -> None:
        self._dsession._active_nodes.add(node)

    def discard_active(self, node: object) -> None:
        self._dsession._active_nodes.discard(node)

    def active(self) -> list[object]:
        """The workers the controller waits for: running ones and, while their jobs queue,
        the stand-ins of replacements."""
        return list(self._dsession._active_nodes)

    @property
    def shutting_down(self) -> bool:
        return bool(self._dsession.shuttingdown)

    def stop(self, reason: str) -> None:
        self._dsession.shouldstop = reason


def collection_diff(first: Sequence[str], other: Sequence[str], name: str, other_name: str) -> str:
    """xdist's own message for two workers that collected different items."""
    return str(report_collection_diff(first, other, name, other_name))


def worker_python(node: object) -> str:
    """The interpreter command of a worker's gateway (``srun ... python`` for a Slurm job)."""
    return str(getattr(getattr(getattr(node, "gateway", None), "spec", None), "python", ""))

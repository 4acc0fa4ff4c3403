"""Replacement Slurm jobs that start without holding up the controller.

xdist replaces a dead worker by starting a new gateway on its event-loop thread, and a gateway
whose interpreter is ``srun`` returns only once Slurm has allocated the job: while the job
waits in the queue (a drained node, a full partition) the controller would handle no other
worker's events. Here the start runs on a thread; until the worker is up, a :class:`Pending`
stands in xdist's set of active workers so the controller keeps waiting for it, a thread
shows the job's queue reason in the progress lines, and a replacement that waited past
``--infx-slurm-wait`` (or is no longer needed) is cancelled. What follows its end runs back on
the controller's thread, through the scheduler (see :mod:`.schedule`).

xdist's controller is reached through :class:`pytest_infx.compat.xdist.XdistSession`, which holds
every internal name this needs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, cast

import pytest

from pytest_infx.compat.xdist import GatewaySpec, WorkerNode, XdistSession
from pytest_infx.plugin.slurm.jobs import SlurmError, SlurmSettings, command, job_name_of_spec
from pytest_infx.plugin.slurm.schedule import ServerGroupScheduling
from pytest_infx.plugin.state import RunState

WATCH_S = 1.0


class ProgressLine(Protocol):
    def begin(self, kind: Literal["queued"], name: str) -> None: ...

    def close(self) -> None: ...


TrackerFactory = Callable[[Path | None, str], ProgressLine]
"""Makes the progress line of one pending replacement (the report's ``Tracker``): passed in by
the plugin, so the launch package does not import the report package."""


@dataclass(frozen=True)
class QueuedJob:
    id: int
    state: str
    reason: str


def queued_job(name: str) -> QueuedJob | None:
    """The newest live job of this name with squeue's reason (``None`` when there is none)."""
    argv = ["squeue", "-h", "-o", "%i|%T|%r", f"--name={name}"]
    try:
        out = command(argv)
    except SlurmError:
        return None
    found = []
    for line in out.splitlines():
        parts = [part.strip() for part in line.split("|", 2)]
        if len(parts) == 3 and parts[0].isdigit():
            found.append(QueuedJob(int(parts[0]), parts[1], parts[2]))
    return max(found, key=lambda job: job.id) if found else None


class Pending:
    """A replacement worker whose job is not running yet. xdist only tests its set of active
    workers for emptiness, so this object keeps the controller waiting for the replacement."""

    def __init__(self, worker: str, name: str | None) -> None:
        self.worker = worker
        self.name = name
        self.since = time.monotonic()
        self.done = threading.Event()
        self.job: QueuedJob | None = None
        self.gave_up: str | None = None
        self.error: str | None = None

    def __repr__(self) -> str:
        return f"<replacement {self.worker} ({self.name})>"


class Replacements:
    """Starts xdist's replacement workers off the controller's thread."""

    def __init__(
        self,
        controller: XdistSession,
        sched: ServerGroupScheduling,
        settings: SlurmSettings,
        tracker: TrackerFactory,
    ):
        self.controller = controller
        self.sched = sched
        self.settings = settings
        self.tracker = tracker
        self.config: pytest.Config = sched.config
        self.pending: set[Pending] = set()
        self.stopped = threading.Event()
        folders = RunState.of(self.config).folders
        self.progress = folders.progress if folders is not None else None
        sched.pending_ended = self.ended

    def install(self) -> None:
        self.controller.replace_clone(self.clone)

    def stop(self) -> None:
        self.stopped.set()

    def clone(self, node: WorkerNode) -> Pending:
        """What ``DSession._clone_node`` does, except that the start runs on a thread."""
        spec = self.controller.new_worker_id(node)
        pending = Pending(str(spec.id), job_name_of_spec(str(spec.python)))
        self.controller.add_active(pending)
        self.pending.add(pending)
        threading.Thread(target=self._start, args=(pending, spec), daemon=True).start()
        threading.Thread(target=self._watch, args=(pending,), daemon=True).start()
        return pending

    def _start(self, pending: Pending, spec: GatewaySpec) -> None:
        try:
            node = self.controller.start_worker(spec)
        except Exception as exc:
            pending.error = f"{type(exc).__name__}: {exc}"
            pending.done.set()
            self.controller.unscheduled(pending)
            return
        self.controller.add_active(node)
        pending.done.set()
        self.controller.discard_active(pending)
        self.pending.discard(pending)

    def _watch(self, pending: Pending) -> None:
        """Shows the job in the progress lines while it waits; cancels it past the wait limit,
        or once the run no longer needs it."""
        tracker = self.tracker(self.progress, pending.worker)
        shown = ""
        try:
            while not pending.done.wait(WATCH_S):
                if pending.name is None:
                    continue
                job = queued_job(pending.name)
                if job is None:
                    continue
                pending.job = job
                if job.state == "PENDING":
                    text = f"replacement Slurm job {job.id} pending: {job.reason}"
                    if text != shown:
                        tracker.begin("queued", text)
                        shown = text
                waited = time.monotonic() - pending.since
                wait_s = self.settings.wait_s
                if job.state == "PENDING" and wait_s is not None and waited > wait_s:
                    pending.gave_up = (
                        f"replacement Slurm job {job.id} waited {waited:.0f} s in the queue "
                        f"(--infx-slurm-wait {wait_s:g}): {job.reason}"
                    )
                elif self.controller.shutting_down or self.stopped.is_set():
                    pending.gave_up = "the run no longer needs it"
                if pending.gave_up:
                    try:
                        command(["scancel", str(job.id)])
                    except SlurmError:
                        pass
                    return
        finally:
            tracker.close()

    def ended(self, pending: object) -> None:
        """On the controller's thread, once a replacement could not start: when no worker
        is left that could still run the queued items, they fail with the reason."""
        assert isinstance(pending, Pending)
        self.controller.discard_active(pending)
        self.pending.discard(pending)
        if self.controller.shutting_down:
            return
        able = [
            node
            for node in self.controller.active()
            if isinstance(node, Pending) or not cast("WorkerNode", node).shutting_down
        ]
        if able:
            return
        reason = pending.gave_up or self._why_not_started(pending)
        ids = self.sched.drop_queued()
        for nodeid in ids:
            path = nodeid.split("::")[0]
            report = pytest.TestReport(
                nodeid=nodeid,
                location=(path, None, path),
                keywords={},
                outcome="failed",
                longrepr=f"no worker was left to run it: {reason}",
                when="call",
            )
            self.config.hook.pytest_runtest_logreport(report=report)
        if self.sched.collection is None:
            self.controller.stop(f"no Slurm worker could start: {reason}")

    def _why_not_started(self, pending: Pending) -> str:
        from pytest_infx.plugin.slurm.jobs import why_ended

        ended = why_ended(pending.name, wait_s=2.0) if pending.name else "its job is unknown"
        return f"replacement worker {pending.worker} did not start ({ended}; {pending.error})"

"""The controller's side of a Slurm run: its worker specs, its scheduler and replacement jobs,
crash reasons and cancelling the run's jobs.

Apart from ``slurm`` (what a job is, in both processes) so that the controller's pieces can
import the job helpers without those importing them back.
"""

from __future__ import annotations

import shutil
import sys
import uuid
from collections.abc import Sequence

import pytest

import pytest_infx.plugin.options as options
from pytest_infx.compat.xdist import WorkerNode, XdistSession, worker_python
from pytest_infx.plugin.slurm.jobs import (
    GROUPS_KEY,
    SlurmSettings,
    cancel,
    job_name,
    job_name_of_spec,
    request_problem,
    tx_specs,
    why_ended,
)
from pytest_infx.plugin.slurm.replace import Replacements, TrackerFactory
from pytest_infx.plugin.slurm.schedule import ServerGroupScheduling


class Controller:
    """Controller-side hooks of a Slurm run: crash reasons and cancelling the run's jobs."""

    def __init__(
        self, settings: SlurmSettings, names: Sequence[str], tracker: TrackerFactory
    ) -> None:
        self.settings = settings
        self.names = tuple(names)
        self.tracker = tracker
        self.replacements: Replacements | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config) -> ServerGroupScheduling:
        sched = ServerGroupScheduling(config)
        controller = XdistSession.of(config)
        if controller is not None:
            self.replacements = Replacements(controller, sched, self.settings, self.tracker)
            self.replacements.install()
        return sched

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: WorkerNode) -> None:
        """Workers parse the command line again and see ``--dist no``; this tells them to
        group items by server, which xdist's worker then writes into the node ids."""
        node.workerinput[GROUPS_KEY] = True

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport) -> None:
        name = job_name_of_spec(worker_python(getattr(report, "node", None)))
        if name is None:
            return
        reason = why_ended(name, time_limit=self.settings.time)
        report.longrepr = (
            f"{reason} while {crashitem} ran; the job's other items, if any, go to a new job\n"
            f"{report.longrepr}"
        )

    def pytest_unconfigure(self) -> None:
        if self.replacements is not None:
            self.replacements.stop()
        left = cancel(self.names)
        if left:
            ids = " ".join(str(job.id) for job in left)
            print(f"infx: Slurm jobs still live after scancel: {ids}", file=sys.stderr)


def configure_controller(config: pytest.Config, tracker: TrackerFactory) -> None:
    """Turn ``--infx-slurm N`` into xdist's `--tx`/`--dist` before xdist reads them."""
    found = options.settings(config).slurm
    if found is None or config.getoption("collectonly"):
        return
    if not config.pluginmanager.hasplugin("xdist"):
        raise pytest.UsageError("--infx-slurm needs pytest-xdist; it is disabled (-p no:xdist?)")
    if config.getoption("numprocesses", None) or config.getoption("tx", None):
        raise pytest.UsageError("--infx-slurm starts its own workers; drop -n/--tx")
    if shutil.which("srun") is None:
        raise pytest.UsageError(
            "--infx-slurm: srun is not on PATH; run pytest on a Slurm login node"
        )
    problem = request_problem(found)
    if problem is not None:
        raise pytest.UsageError(problem)
    tag = uuid.uuid4().hex[:10]
    config.option.tx = tx_specs(found, tag)
    config.option.dist = "loadgroup"
    if config.getoption("maxworkerrestart", None) is None:
        config.option.maxworkerrestart = str(4 * found.workers)
    names = [job_name(tag, slot) for slot in range(found.workers)]
    config.pluginmanager.register(Controller(found, names, tracker), "infx-slurm")

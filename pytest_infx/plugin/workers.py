"""What the controller tells each xdist worker, and what each worker tells it back.

Out: the run folders and the golden folder as the run started, in ``workerinput``, to every
worker, a replacement started mid-run included. Back: the one-line selection reasons, in
``workeroutput``, shown once by the controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.options as options
from pytest_infx.plugin.configure import PROGRESS_FOLDER_INPUT, RUN_FOLDER_INPUT
from pytest_infx.plugin.state import RunState

if TYPE_CHECKING:
    from pytest_infx.compat.xdist import WorkerNode

WORKER_REASONS = "infx_reasons"
GOLDEN_TREE = "infx_golden_tree"


def configure_node(node: WorkerNode) -> None:
    """Every worker judges golden names from the golden folder as the run started (see
    ``preflight.GoldenTree``) and works in the controller's run folders."""
    from pytest_infx.prepare import preflight

    config = node.config
    state = RunState.of(config)
    if state.golden_tree is None:
        state.golden_tree = preflight.golden_tree(options.settings(config).golden).to_wire()
    node.workerinput[GOLDEN_TREE] = state.golden_tree
    from pytest_infx.plugin.run.history import send_stamp

    send_stamp(config, node.workerinput)
    folders = state.folders
    if folders is not None:
        node.workerinput[RUN_FOLDER_INPUT] = str(folders.run)
        shown = folders.progress
        node.workerinput[PROGRESS_FOLDER_INPUT] = str(shown) if shown is not None else None


def worker_input(config: pytest.Config) -> dict[str, object]:
    """What the controller sent this worker; empty on the controller or without xdist."""
    sent: dict[str, object] = getattr(config, "workerinput", {})
    return sent


def golden_tree(config: pytest.Config) -> object:
    return worker_input(config).get(GOLDEN_TREE)


def send_reasons(session: pytest.Session) -> None:
    workeroutput: dict[str, object] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WORKER_REASONS] = list(RunState.of(session.config).reasons)


def node_down(node: WorkerNode, error: object) -> None:
    """Workers select the points; the controller shows their one-line reasons once."""
    state = RunState.of(node.config)
    if not state.reasons:
        state.add_reasons(getattr(node, "workeroutput", {}).get(WORKER_REASONS, []))

"""What the controller tells each xdist worker, and what each worker tells it back.

Out: the run folders and the golden folder as the run started, in ``workerinput``, to every
worker, a replacement started mid-run included. Back: the one-line selection reasons, in
``workeroutput``, shown once by the controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.options as options
import pytest_infx.plugin.stash as stash

if TYPE_CHECKING:
    from pytest_infx.compat.xdist import WorkerNode

WORKER_REASONS = "infx_reasons"
GOLDEN_TREE = "infx_golden_tree"
RUN_FOLDER_INPUT = "infx_run_dir"
PROGRESS_FOLDER_INPUT = "infx_progress_dir"


def configure_node(node: WorkerNode) -> None:
    """Every worker judges golden names from the golden folder as the run started (see
    ``preflight.GoldenTree``) and works in the controller's run folders."""
    from pytest_infx.prepare import preflight

    config = node.config
    if stash.GOLDEN_TREE not in config.stash:
        tree = preflight.golden_tree(options.settings(config).golden)
        config.stash[stash.GOLDEN_TREE] = tree.to_wire()
    node.workerinput[GOLDEN_TREE] = config.stash[stash.GOLDEN_TREE]
    from pytest_infx.plugin.run.history import send_stamp

    send_stamp(config, node.workerinput)
    folders = config.stash.get(stash.FOLDERS, None)
    if folders is not None:
        node.workerinput[RUN_FOLDER_INPUT] = str(folders.run)
        shown = folders.progress
        node.workerinput[PROGRESS_FOLDER_INPUT] = str(shown) if shown is not None else None


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker: xdist gives a worker's config the
    ``workerinput`` its controller sent, and the controller's none."""
    return hasattr(config, "workerinput")


def worker_input(config: pytest.Config) -> dict[str, object]:
    """What the controller sent this worker; empty on the controller or without xdist."""
    sent: dict[str, object] = getattr(config, "workerinput", {})
    return sent


def golden_tree(config: pytest.Config) -> object:
    return worker_input(config).get(GOLDEN_TREE)


def send_reasons(session: pytest.Session) -> None:
    workeroutput: dict[str, object] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        reasons: tuple[str, ...] = session.config.stash.get(stash.REASONS, ())
        workeroutput[WORKER_REASONS] = list(reasons)


def node_down(node: WorkerNode, error: object) -> None:
    """Workers select the points; the controller shows their one-line reasons once."""
    config = node.config
    if not config.stash.get(stash.REASONS, ()):
        stash.add(config, stash.REASONS, getattr(node, "workeroutput", {}).get(WORKER_REASONS, []))

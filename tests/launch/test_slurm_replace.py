"""Replacement Slurm workers lean on two private names of xdist's DSession; this pins the xdist
versions they were checked against, so an upgrade is a failing test rather than a crash
mid-sweep."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from xdist.dsession import DSession

from pytest_infx.plugin.slurm_replace import CHECKED_XDIST


def test_the_installed_xdist_is_one_the_replacements_were_checked_against() -> None:
    assert version("pytest-xdist") in CHECKED_XDIST, (
        f"pytest-xdist {version('pytest-xdist')}: check DSession._clone_node and "
        "DSession._active_nodes against pytest_infx.plugin.slurm_replace, then list the version"
    )
    errordown = inspect.getsource(DSession.worker_errordown)
    assert "self._clone_node(node)" in errordown
    assert "self._active_nodes.remove(node)" in errordown
    assert "if not self._active_nodes:" in inspect.getsource(DSession.loop_once)
    assert "self.sched.remove_pending_tests_from_node(node, indices)" in inspect.getsource(
        DSession.worker_unscheduled
    )

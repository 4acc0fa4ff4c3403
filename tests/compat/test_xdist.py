"""Replacement Slurm workers lean on two private names of xdist's DSession; beyond their being
there (tests/plugin/test_privateapi.py), this pins how DSession uses them, so an xdist that
changes the calls is a failing test rather than a crash mid-sweep."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from xdist.dsession import DSession

from pytest_infx.plugin.privateapi import outside_checked


def test_the_installed_xdist_calls_the_names_the_replacements_replace() -> None:
    assert outside_checked("pytest-xdist", version("pytest-xdist")) is None
    errordown = inspect.getsource(DSession.worker_errordown)
    assert "self._clone_node(node)" in errordown
    assert "self._active_nodes.remove(node)" in errordown
    assert "if not self._active_nodes:" in inspect.getsource(DSession.loop_once)
    assert "self.sched.remove_pending_tests_from_node(node, indices)" in inspect.getsource(
        DSession.worker_unscheduled
    )

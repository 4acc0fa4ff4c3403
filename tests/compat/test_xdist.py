"""Replacement Slurm workers lean on xdist's DSession; beyond the names being there
(tests/compat/test_versions.py), this pins how DSession uses them, so an xdist that changes the
calls is a failing test rather than a crash mid-sweep."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from xdist.dsession import DSession

from pytest_infx.compat.versions import outside_checked
from pytest_infx.compat.xdist import collection_diff, worker_python


def test_the_installed_xdist_calls_the_names_the_replacements_replace() -> None:
    assert outside_checked("pytest-xdist", version("pytest-xdist")) is None
    errordown = inspect.getsource(DSession.worker_errordown)
    assert "self._clone_node(node)" in errordown
    assert "self._active_nodes.remove(node)" in errordown
    assert "if not self._active_nodes:" in inspect.getsource(DSession.loop_once)
    assert "self.sched.remove_pending_tests_from_node(node, indices)" in inspect.getsource(
        DSession.worker_unscheduled
    )


def test_the_clone_xdist_makes_is_the_one_the_session_replaces() -> None:
    clone = inspect.getsource(DSession._clone_node)
    assert "self.nodemanager.group.allocate_id(spec)" in clone
    assert "self.nodemanager.setup_node(spec, self.queue.put)" in clone
    assert "self._active_nodes.add(clone)" in clone


def test_two_different_collections_are_described_with_xdists_words() -> None:
    message = collection_diff(["a::x", "a::y"], ["a::x", "a::z"], "gw0", "gw1")
    assert "Different tests were collected between gw0 and gw1" in message
    assert "-a::y" in message and "+a::z" in message


def test_a_workers_python_is_read_from_its_gateway_spec() -> None:
    class Spec:
        python = "srun -N1 -n1 --unbuffered --job-name=infx-w1 python"

    class Gateway:
        spec = Spec()

    class Node:
        gateway = Gateway()

    assert worker_python(Node()) == Spec.python
    assert worker_python(object()) == ""

"""pytest-infx installed into someone else's repository: their tests run as without it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from .helpers import speedbench, write

GC_PROBE = """
import gc

def test_sees_the_collector_as_python_left_it():
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
"""


def test_a_host_test_sees_the_garbage_collector_on_and_unfrozen(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "s.yaml", speedbench("s-b300", draft_lengths=[1, 2]))
    pytester.makepyfile(test_host=GC_PROBE)
    result = pytester.runpytest_subprocess("--gpu", "b300", "-p", "no:randomly", "test_host.py")
    result.assert_outcomes(passed=1)
    everything = pytester.runpytest_subprocess("--gpu", "b300", "-k", "host")
    everything.assert_outcomes(passed=1, deselected=4)


def test_an_in_process_run_gives_the_collector_back(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    """A host test that runs pytest in its own process (pytester's inline runs) keeps its
    collector as it was, even after a collect-only run, where the plugin freezes what it
    collected until pytest's own closing collection is done."""
    write(recipes / "s.yaml", speedbench("s-b300", draft_lengths=[1, 2]))
    assert gc.get_freeze_count() == 0
    result = pytester.runpytest_inprocess("--collect-only", "-q", "--gpu", "b300")
    assert result.ret == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0

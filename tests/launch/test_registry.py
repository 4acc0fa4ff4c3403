from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_infx.launch.procfs import group_members, proc_stat
from pytest_infx.launch.registry import Registry, sweep

from .conftest import wait_until

TREE = "import os, time\nif os.fork() == 0:\n    time.sleep(300)\ntime.sleep(300)\n"


@pytest.fixture
def orphan_group() -> Iterator[subprocess.Popen[bytes]]:
    """A server-like group started without a guard, as after a guard was SIGKILLed."""
    proc = subprocess.Popen([sys.executable, "-c", TREE], start_new_session=True)
    assert wait_until(lambda: len(group_members(proc.pid)) == 2)
    yield proc
    if group_members(proc.pid):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def test_sweep_kills_leftover_groups(
    registry: Registry, orphan_group: subprocess.Popen[bytes]
) -> None:
    entry = registry.record(pgid=orphan_group.pid, label="leftover")
    assert registry.entries() == [entry]
    killed = sweep(registry, grace_s=2)
    assert killed == [entry]
    orphan_group.wait(timeout=5)
    assert wait_until(lambda: not group_members(orphan_group.pid))


def test_sweep_spares_a_recycled_group_id(
    registry: Registry, orphan_group: subprocess.Popen[bytes]
) -> None:
    st = proc_stat(orphan_group.pid)
    assert st is not None
    line = {"pgid": st.pid, "start_ticks": st.start_ticks - 1, "label": "old", "owner_pid": 1}
    registry.path.write_text(json.dumps(line) + "\n")
    assert sweep(registry, grace_s=1) == []
    assert len(group_members(orphan_group.pid)) == 2


def test_sweep_of_a_clean_run_finds_nothing(registry: Registry, tmp_path: Path) -> None:
    assert sweep(registry) == []
    registry.path.write_text("not json\n")
    assert registry.entries() == []

"""aiperf and the install steps (pip, post-install scripts) run under the guard like an engine:
a SIGKILL of the process that started them leaves none of their processes behind."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_infx.launch.procfs import group_members, is_alive, proc_stat

from .conftest import wait_until

HELP = Path(__file__).resolve().parents[1] / "agentic" / "data" / "aiperf-0.13.0-profile-help.txt"

TOOL = """
import json, os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
record = {"tool": os.getpid(), "child": child.pid, "pgid": os.getpgid(0)}
with open(PIDS + ".tmp", "w") as f:
    json.dump(record, f)
os.rename(PIDS + ".tmp", PIDS)
time.sleep(600)
"""

AIPERF_PARENT = """
import sys
from pathlib import Path

from pytest_infx.agentic.runner import AgenticRun, run_aiperf
from pytest_infx.agentic.traces import default_traces_path

tmp = Path(sys.argv[1])
run = AgenticRun(aiperf=tmp / "bin" / "aiperf", url="http://127.0.0.1:9", model="m",
                 tokenizer=str(tmp / "tok"), concurrency=1, duration_s=60.0,
                 artifact_dir=tmp / "out", traces=default_traces_path())
run_aiperf(run, timeout_s=600)
"""

INSTALL_PARENT = """
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[2])
from pytest_infx.envs.toolenv import ScriptStep, ToolEnvSpec, ensure

step = ScriptStep(title="hang", script="tool.py.txt", package="infx_hang_steps")
ensure(ToolEnvSpec(name="hang", version="1", scripts=(step,)), cache_dir=Path(sys.argv[1]))
"""


def _kill_parent_mid_run(parent: list[str], pids: Path) -> None:
    """Start the parent, wait until its tool runs, SIGKILL the parent, and check that the tool,
    its child and its group are gone within a few seconds."""
    proc = subprocess.Popen(parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        if not wait_until(lambda: pids.exists() or proc.poll() is not None, timeout=60):
            pytest.fail("the tool did not start within 60 s")
        assert pids.exists(), proc.communicate()[0].decode()[-3000:]
        record: dict[str, int] = json.loads(pids.read_text())
        guard = proc_stat(record["pgid"])
        assert guard is not None and guard.ppid == proc.pid, "the tool does not run under a guard"
        proc.kill()
        proc.wait()
        gone = wait_until(
            lambda: (
                not group_members(record["pgid"])
                and not is_alive(record["tool"])
                and not is_alive(record["child"])
            ),
            timeout=5,
        )
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    left = [pid for pid in (record["tool"], record["child"]) if is_alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert gone, f"left behind after the parent's SIGKILL: {left}"


def test_sigkill_of_the_parent_leaves_no_aiperf_behind(tmp_path: Path) -> None:
    pids = tmp_path / "pids.json"
    aiperf = tmp_path / "bin" / "aiperf"
    aiperf.parent.mkdir()
    aiperf.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"if '--help' in sys.argv:\n    print(open({str(HELP)!r}).read())\n    sys.exit(0)\n"
        + TOOL.replace("PIDS", repr(str(pids)))
    )
    aiperf.chmod(aiperf.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "tok").mkdir()
    script = tmp_path / "parent.py"
    script.write_text(AIPERF_PARENT)
    _kill_parent_mid_run([sys.executable, str(script), str(tmp_path)], pids)


def test_sigkill_of_the_parent_leaves_no_install_step_behind(tmp_path: Path) -> None:
    pids = tmp_path / "pids.json"
    package = tmp_path / "pkgroot" / "infx_hang_steps"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tool.py.txt").write_text(textwrap.dedent(TOOL).replace("PIDS", repr(str(pids))))
    script = tmp_path / "parent.py"
    script.write_text(INSTALL_PARENT)
    parent = [sys.executable, str(script), str(tmp_path / "cache"), str(tmp_path / "pkgroot")]
    _kill_parent_mid_run(parent, pids)

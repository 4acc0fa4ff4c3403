from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_infx.launch.ports import free_port
from pytest_infx.launch.procfs import group_members, is_alive
from pytest_infx.launch.registry import Registry

from .conftest import STANDIN, read_records, wait_until

CONFTEST = """
import json, os, sys
from pathlib import Path

import pytest

from pytest_infx.launch.registry import Registry
from pytest_infx.launch.shared import ServerPool
from pytest_infx.launch.spec import ServerSpec
from pytest_infx.results.layout import Layout

RUN = Path(RUN_DIR)


@pytest.fixture(scope="session")
def server():
    registry = Registry(RUN / "registry.jsonl")
    pool = ServerPool(RUN / "state", registry, Layout(RUN).server_log, grace_s=5)
    argv = (sys.executable, STANDIN, "--port", "{port}", "--spawn-child",
            "--record", str(RUN / "starts.jsonl"))
    spec = ServerSpec(key="k", label="standin", argv=argv, preferred_port=PORT,
                      ready_timeout_s=60)
    handle = pool.acquire(spec)
    yield handle
    pool.release("k")
    pool.close()
"""

ITEM = """
import json, os, time
from pathlib import Path


def test_long(server):
    marker = Path(os.environ["INFX_MARKER"])
    marker.write_text(json.dumps({"worker": os.getpid(), "pgid": server.pgid}))
    time.sleep(120)
"""


@pytest.fixture
def run_dir(pytester: pytest.Pytester, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    conftest = (
        CONFTEST.replace("RUN_DIR", repr(str(run)))
        .replace("STANDIN", repr(str(STANDIN)))
        .replace("PORT", str(free_port("127.0.0.1")))
    )
    pytester.makeconftest(textwrap.dedent(conftest))
    pytester.makepyfile(test_long=ITEM)
    return run


def _launch(pytester: pytest.Pytester, marker: Path, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, INFX_MARKER=str(marker))
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:infx", *args]
    return subprocess.Popen(
        cmd, cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def _mid_run(proc: subprocess.Popen[bytes], marker: Path) -> dict[str, int]:
    if not wait_until(lambda: marker.exists() or proc.poll() is not None, timeout=60):
        proc.kill()
    assert marker.exists(), proc.communicate()[0].decode()[-3000:]
    info: dict[str, int] = json.loads(marker.read_text())
    return info


def _engines(run: Path) -> list[int]:
    starts = read_records(run / "starts.jsonl")
    assert len(starts) == 1
    pids = [int(starts[0]["pid"]), int(starts[0]["child"])]  # type: ignore[call-overload]
    assert all(is_alive(p) for p in pids)
    return pids


def _assert_nothing_left(run: Path, pids: list[int], timeout: float = 20) -> None:
    pgids = [e.pgid for e in Registry(run / "registry.jsonl").entries()]
    assert pgids
    gone = wait_until(
        lambda: not any(is_alive(p) for p in pids) and not any(group_members(g) for g in pgids),
        timeout=timeout,
    )
    for pgid in pgids:
        if group_members(pgid):
            os.killpg(pgid, signal.SIGKILL)
    assert gone, f"left behind: {[p for p in pids if is_alive(p)]}"


def test_sigint_to_pytest_leaves_no_engine(
    pytester: pytest.Pytester, run_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    proc = _launch(pytester, marker, "-s")
    _mid_run(proc, marker)
    pids = _engines(run_dir)
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=60)[0].decode()
    assert "KeyboardInterrupt" in out
    _assert_nothing_left(run_dir, pids, timeout=1)


def test_sigkill_of_pytest_leaves_no_engine(
    pytester: pytest.Pytester, run_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    proc = _launch(pytester, marker)
    _mid_run(proc, marker)
    pids = _engines(run_dir)
    proc.kill()
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()
    _assert_nothing_left(run_dir, pids)
    log = next((run_dir / "logs").glob("*.log")).read_text()
    assert "guard: parent died (SIGTERM); stopping its process group" in log


def test_sigkill_of_an_xdist_worker_leaves_no_engine(
    pytester: pytest.Pytester, run_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    proc = _launch(pytester, marker, "-n", "1", "-p", "xdist")
    info = _mid_run(proc, marker)
    assert info["worker"] != proc.pid
    pids = _engines(run_dir)
    os.kill(info["worker"], signal.SIGKILL)
    _assert_nothing_left(run_dir, pids)
    out = proc.communicate(timeout=60)[0].decode()
    assert "crashed" in out

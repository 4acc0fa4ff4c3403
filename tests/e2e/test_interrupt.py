from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import Sweep, wait_gone
from .helpers import live_pids, records


def _wait_for(predicate: object, timeout: float) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def _streaming(results: Path) -> bool:
    logs = list((results / "logs").glob("*.log")) if (results / "logs").is_dir() else []
    return any("POST /v1/chat/completions" in p.read_text(errors="replace") for p in logs)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_sigint_mid_sweep_leaves_no_stand_in_alive(sweep: Sweep, workers: tuple[str, ...]) -> None:
    sweep.add("slow-cpu-vllm", extra=("--step-delay", "0.5"), draft_lengths=(1, 2))
    argv = [sys.executable, "-m", "pytest", "--gpu", "cpu", "--infx-results", str(sweep.results)]
    proc = sweep.pytester.popen(
        [*argv, "--snapshot-update", *workers],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert _wait_for(lambda: _streaming(sweep.results), timeout=60), "no request started"
        assert live_pids(sweep.record), "the stand-in is not running mid-sweep"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = out.decode(errors="replace")
    # a second KeyboardInterrupt from execnet's teardown can end Python by the signal itself
    assert proc.returncode in (pytest.ExitCode.INTERRUPTED, -signal.SIGINT), text
    assert "KeyboardInterrupt" in text, text
    assert records(sweep.record)
    assert wait_gone(sweep.record, timeout=5.0) == []

"""aiperf's console stays off the terminal: an AgentX point's run says once where the console
goes, and what aiperf prints on stdout and stderr is in that file, not in pytest's output.

aiperf here is a stand-in in an environment of its own, found where the real one is installed:
it answers ``--help`` with aiperf 0.13.0's, prints lines of both streams (among them the
warnings the real one prints on passing points) while progress lines tick, and writes a real
export, so the point passes and no engine or install is needed.
"""

from __future__ import annotations

import json
import re
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_infx.agentic.aggregate import RECORDS_NAME
from pytest_infx.agentic.results import EXPORT_NAME
from pytest_infx.agentic.runner import CONSOLE_LOG_NAME
from pytest_infx.envs.aiperf import SPEC
from pytest_infx.envs.toolenv import locate
from pytest_infx.launch.ports import free_port

from .conftest import Sweep

DATA = Path(__file__).resolve().parents[1] / "agentic" / "data"
LINES = 40
NOISE = re.compile(r"aiperf-(stdout|stderr) \d+")


def _records() -> str:
    """Two profiled requests, as aiperf's per-request export writes them."""
    lines = []
    for start, isl, osl in ((1, 1000, 100), (2, 2000, 200)):
        metrics = {
            "input_sequence_length": isl,
            "output_sequence_length": osl,
            "time_to_first_token": 100.0,
            "inter_token_latency": 10.0,
            "request_latency": 1000.0,
        }
        record = {
            "metadata": {
                "request_start_ns": start * 10**9,
                "request_end_ns": (start + 1) * 10**9,
                "benchmark_phase": "profiling",
            },
            "metrics": {name: {"value": value} for name, value in metrics.items()},
            "error": None,
        }
        lines.append(json.dumps(record) + "\n")
    return "".join(lines)


def _stand_in_aiperf(cache: Path) -> Path:
    env = locate(SPEC, cache_dir=cache)
    script = env.bin_dir / "aiperf"
    script.parent.mkdir(parents=True)
    body = f"""
        import shutil, sys, time
        if "--help" in sys.argv:
            print(open({str(DATA / "aiperf-0.13.0-profile-help.txt")!r}).read())
            sys.exit(0)
        for n in range({LINES}):
            print(f"aiperf-stdout {{n}} counter reset(s) detected. Statistics may be inaccurate",
                  flush=True)
            print(f"aiperf-stderr {{n}} GPU Telemetry not reachable", file=sys.stderr, flush=True)
            time.sleep(0.05)
        folder = sys.argv[sys.argv.index("--artifact-dir") + 1]
        shutil.copy({str(DATA / "profile_export_ok.json")!r}, folder + "/{EXPORT_NAME}")
        open(folder + "/{RECORDS_NAME}", "w").write({_records()!r})
    """
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    # the marker says the environment is installed, so the run uses it and installs nothing
    env.marker_path.write_text(json.dumps({"name": SPEC.name, "stand_in": True}))
    return script


def test_aiperfs_console_goes_to_its_file_not_to_the_terminal(
    sweep: Sweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    _stand_in_aiperf(cache)
    monkeypatch.setenv("INFX_CACHE_DIR", str(cache))
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    sweep.add_agentic("fake-agentic", [1], free_port("127.0.0.1"))
    result = sweep.run("-m", "agentic", "-v", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=1)
    consoles = list((sweep.results / "agentic").rglob(CONSOLE_LOG_NAME))
    assert len(consoles) == 1, consoles
    written = NOISE.findall(consoles[0].read_text())
    assert written.count("stdout") == LINES and written.count("stderr") == LINES
    terminal = result.outlines + result.errlines
    said = [line for line in terminal if f"its output goes to {consoles[0]}" in line]
    assert len(said) == 1, terminal
    shown = [line for line in terminal if NOISE.search(line)]
    # a point's progress line ends with aiperf's latest line, once a tick, as the README says
    progress = [line for line in shown if line.startswith("infx ") and " | aiperf-" in line]
    assert shown == progress, shown
    assert len(progress) < LINES, progress

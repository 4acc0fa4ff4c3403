from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_infx.plugin.progress import Activity, Display, Tracker, read_activities, render

from .conftest import Sweep

KEY = "slow-cpu-vllm"
PACED = ("--step-delay", "0.12", "--start-delay", "1.5")
CELL_LINE = re.compile(
    r"^infx(?: \[(?P<worker>gw\d)\])? (?P<id>\S+\[k\d-thinking_o\w+\]): (?P<done>\d)/(?P<total>\d) "
    r"requests, (?P<rate>[\d.]+) output tok/s, elapsed \d+:\d\d(?:, ETA \d+:\d\d)?$"
)
SERVER_LINE = re.compile(
    r"^infx(?: \[gw\d\])? starting server \S+ \(\d+:\d\d\)(?:: (?P<tail>.*))?$"
)


def _paced(sweep: Sweep, draft_lengths: tuple[int, ...]) -> None:
    """Four prompts one at a time, each about a second long, behind a server that loads for
    1.5 s: a cell lasts several progress intervals."""
    sweep.add(KEY, extra=PACED, draft_lengths=draft_lengths, concurrency=1)


def _cells(result: pytest.RunResult) -> list[re.Match[str]]:
    return [m for line in result.outlines if (m := CELL_LINE.match(line))]


def test_progress_lines_appear_while_a_cell_runs(sweep: Sweep) -> None:
    _paced(sweep, (1,))
    result = sweep.run("--snapshot-update", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=2)
    cells = _cells(result)
    assert {m["id"] for m in cells} == {f"{KEY}[k1-thinking_off]", f"{KEY}[k1-thinking_on]"}
    assert all(m["total"] == "4" and m["worker"] is None for m in cells)
    midway = [m for m in cells if 0 < int(m["done"]) < 4]
    assert midway, "no line was printed while the cell was under way:\n" + result.stdout.str()
    assert any(float(m["rate"]) > 0 and "ETA" in m.group(0) for m in midway)
    tails = [m["tail"] for line in result.outlines if (m := SERVER_LINE.match(line))]
    assert any(t and "loading weights" in t for t in tails), result.stdout.str()


def test_progress_lines_name_the_worker_under_xdist(sweep: Sweep) -> None:
    _paced(sweep, (1, 2))
    result = sweep.run("-n", "2", "--snapshot-update", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=4)
    cells = _cells(result)
    assert cells and all(m["worker"] in ("gw0", "gw1") for m in cells), result.stdout.str()
    assert {m["id"] for m in cells} <= {
        f"{KEY}[k{k}-{mode}]" for k in (1, 2) for mode in ("thinking_off", "thinking_on")
    }
    assert any(0 < int(m["done"]) < 4 for m in cells)


def test_progress_off_prints_nothing(sweep: Sweep) -> None:
    sweep.add(KEY, extra=("--step-delay", "0.05"), draft_lengths=(1,), concurrency=1)
    result = sweep.run(
        "--snapshot-update", "--infx-progress", "off", "--infx-progress-interval", "0.1"
    )
    result.assert_outcomes(passed=2)
    assert _cells(result) == []
    assert not any(SERVER_LINE.match(line) for line in result.outlines)


def test_a_line_says_done_total_rate_elapsed_and_eta() -> None:
    cell = Activity("gw1", "cell", "k[k2-thinking_on]", started=100.0, done=2, total=8, tokens=300)
    assert render(cell, 130.0, tagged=True) == (
        "infx [gw1] k[k2-thinking_on]: 2/8 requests, 10.0 output tok/s, elapsed 0:30, ETA 1:30"
    )
    failed = replace(cell, done=8, failed=1)
    assert render(failed, 4000.0, tagged=False) == (
        "infx k[k2-thinking_on]: 8/8 requests, 1 failed, 0.1 output tok/s, elapsed 1:05:00"
    )


def test_a_starting_server_shows_its_logs_last_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("INFO loading\n\x1b[32mINFO\x1b[0m\tcompiling graphs 3/7\r\n\n")
    server = Activity("main", "server", "k-k2", started=0.0, log=str(log))
    assert render(server, 75.0, tagged=False) == (
        "infx starting server k-k2 (1:15): INFO compiling graphs 3/7"
    )
    preparing = Activity("gw2", "preparing", "k[k2-thinking_off]", started=0.0)
    assert render(preparing, 3700.0, tagged=True) == (
        "infx [gw2] preparing the server of k[k2-thinking_off]: engine, checkpoint (1:01:40)"
    )
    point = Activity("main", "point", "k[tp1-c4]", started=0.0, duration_s=60.0, log=str(log))
    assert render(point, 20.0, tagged=False) == (
        "infx k[tp1-c4]: elapsed 0:20, ETA 0:40 | INFO compiling graphs 3/7"
    )


def test_the_tracker_mirrors_its_activity_to_a_file_until_idle(tmp_path: Path) -> None:
    tracker = Tracker(tmp_path, "gw3", flush_s=0.05)
    tracker.begin("cell", "k[k1-thinking_off]", total=4)
    for tokens in (10, 20):
        tracker.request_done(tokens, ok=True)
    tracker.request_done(None, ok=False)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        (found,) = read_activities(tmp_path)
        if found.done == 3:
            break
        time.sleep(0.02)
    assert (found.worker, found.done, found.failed, found.tokens) == ("gw3", 3, 1, 30)
    tracker.idle()
    assert read_activities(tmp_path) == []
    tracker.close()


class _Writer:
    width_of_current_line = 7
    fullwidth = 60


class _Config:
    def get_terminal_writer(self) -> _Writer:
        return _Writer()


class _Reporter:
    config = _Config()


def _drain(fd: int) -> str:
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 65536).decode()
    except BlockingIOError:
        return ""


def test_live_lines_sit_below_pytests_line_and_are_erased_before_pytest_writes(
    tmp_path: Path,
) -> None:
    Tracker(tmp_path, "gw0").begin("cell", "k[k1-thinking_on]", total=4)
    Tracker(tmp_path, "gw1").begin("waiting", "k-k2")
    read, write = os.pipe()
    display = Display(tmp_path, write, live=True, interval_s=30, reporter=_Reporter())  # type: ignore[arg-type]
    display.tick()
    drawn = _drain(read)
    assert drawn.startswith("\n\n\x1b[2A\x1b[8G\x1b7") and drawn.endswith("\x1b[J\x1b8")
    assert "\n\r\x1b[2Kinfx [gw0] k[k1-thinking_on]: 0/4 requests" in drawn
    assert "\n\r\x1b[2Kinfx [gw1] waiting for server k-k2 (0:00)" in drawn
    with display.paused():
        assert _drain(read) == "\x1b[J"
    with display.paused():
        assert _drain(read) == ""
    display.stop()
    os.close(read)


def test_plain_lines_start_on_a_line_of_their_own(tmp_path: Path) -> None:
    Tracker(tmp_path, "main").begin("server", "k-k1")
    read, write = os.pipe()
    display = Display(tmp_path, write, live=False, interval_s=30, reporter=_Reporter())  # type: ignore[arg-type]
    display.tick()
    assert _drain(read) == "\ninfx starting server k-k1 (0:00)\n" + " " * 7
    display.stop()
    os.close(read)


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        (
            "infx_progress = loud",
            (),
            "ini infx_progress = 'loud': use one of auto, live, lines, off",
        ),
        ("infx_progress_interval = soon", (), "ini infx_progress_interval = 'soon': give a number"),
        ("", ("--infx-progress-interval", "0"), "--infx-progress-interval 0: give a positive"),
    ],
)
def test_a_bad_progress_setting_is_a_usage_error(
    pytester: pytest.Pytester, ini: str, args: tuple[str, ...], message: str
) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest_subprocess("--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_the_activity_of_a_dead_worker_is_not_shown(tmp_path: Path) -> None:
    Tracker(tmp_path, "gw0").begin("cell", "k[k1-thinking_on]", total=4)
    Tracker(tmp_path, "gw1").begin("cell", "k[k2-thinking_on]", total=4)
    dead = subprocess.Popen(["true"])
    dead.wait()
    crashed = tmp_path / "gw1.json"
    crashed.write_text(crashed.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {dead.pid}'))
    assert [a.worker for a in read_activities(tmp_path)] == ["gw0"]

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace
from pathlib import Path

from pytest_infx.plugin.progress import Activity, Display, Tracker, read_activities, render


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

    def flush(self) -> None:
        pass


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
    assert _drain(read) == "\ninfx starting server k-k1 (0:00)\n"
    display.stop()
    os.close(read)


def test_the_activity_of_a_dead_worker_is_not_shown(tmp_path: Path) -> None:
    Tracker(tmp_path, "gw0").begin("cell", "k[k1-thinking_on]", total=4)
    Tracker(tmp_path, "gw1").begin("cell", "k[k2-thinking_on]", total=4)
    dead = subprocess.Popen(["true"])
    dead.wait()
    crashed = tmp_path / "gw1.json"
    crashed.write_text(crashed.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {dead.pid}'))
    assert [a.worker for a in read_activities(tmp_path)] == ["gw0"]

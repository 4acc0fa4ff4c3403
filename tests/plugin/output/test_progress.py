from __future__ import annotations

import os
import subprocess
from pathlib import Path

from pytest_infx.plugin.output.activity import Tracker, read_activities
from pytest_infx.plugin.output.progress import Display


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

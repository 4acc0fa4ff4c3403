"""Live progress of the running cells, points and server starts, in the pytest terminal.

xdist workers cannot write to the controller's terminal, so every process that runs items keeps
what it is doing in a small JSON file under the run folder (``progress/<worker>.json``, written
by a thread so the benchmark's event loop never waits on the disk), and the process that owns the
terminal renders all of them from a thread: on a terminal as lines redrawn in place below
pytest's own output (erased whenever pytest itself writes), elsewhere (CI logs) as plain lines
every ``interval`` seconds, so a week-long sweep neither floods its log nor goes silent.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from pytest_infx.plugin.output.activity import (
    LIVE_TICK_S,
    PLUGIN_NAME,
    read_activities,
    render,
)
from pytest_infx.settings import environment


class Display:
    """Renders every process's activity to a duplicate of the terminal's file descriptor.

    A duplicate, because pytest points descriptor 1 at a capture file while an item runs, and
    the lines must reach the terminal then. In ``live`` mode the lines sit below pytest's
    current line and are redrawn each second; pytest's own writes happen in hooks that
    :meth:`paused` wraps, which erases the lines first, so the two never overwrite each other.
    """

    def __init__(
        self,
        folder: Path,
        fd: int,
        *,
        live: bool,
        interval_s: float,
        reporter: pytest.TerminalReporter | None,
    ) -> None:
        self.folder = folder
        self.fd = fd
        self.live = live
        self.interval_s = LIVE_TICK_S if live else interval_s
        self.reporter = reporter
        self._lock = threading.RLock()
        self._drawn = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="infx-progress-display", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        with self._lock:
            self._erase()
        with contextlib.suppress(OSError):
            os.close(self.fd)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            self._erase()
            yield

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.tick()
            except Exception as exc:
                self._write(f"\ninfx: progress display stopped: {exc!r}\n")
                return

    def lines(self, now: float | None = None) -> list[str]:
        activities = read_activities(self.folder)
        tagged = any(a.worker != "main" for a in activities)
        moment = time.time() if now is None else now
        return [render(a, moment, tagged=tagged) for a in activities]

    def tick(self) -> None:
        lines = self.lines()
        with self._lock:
            if self.live:
                self._draw(lines)
            elif lines:
                self._print(lines)

    def _column(self) -> int:
        if self.reporter is None:
            return 0
        return int(self.reporter.config.get_terminal_writer().width_of_current_line)

    def _print(self, lines: list[str]) -> None:
        """Whole lines and nothing else, for a log read without a terminal: pytest's pending
        output goes first (its writer buffers when the output is not a terminal), a line it
        had begun is ended, and pytest goes on at the start of the next line."""
        if self.reporter is not None:
            self.reporter.flush()
        prefix = "\n" if self._column() else ""
        self._write(prefix + "\n".join(lines) + "\n")

    def _draw(self, lines: list[str]) -> None:
        if not lines:
            self._erase()
            return
        width = 80
        if self.reporter is not None:
            width = self.reporter.config.get_terminal_writer().fullwidth
        n = len(lines)
        out = "\n" * n + f"\x1b[{n}A\x1b[{self._column() + 1}G\x1b7"
        for line in lines:
            out += "\n\r\x1b[2K" + line[: max(10, width - 1)]
        self._write(out + "\x1b[J\x1b8")
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self._write("\x1b[J")
            self._drawn = False

    def _write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        with contextlib.suppress(OSError):
            while data:
                data = data[os.write(self.fd, data) :]


def terminal_fd() -> int | None:
    try:
        return os.dup(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return None


class ProgressPlugin:
    """Owns the display on the process that owns the terminal (the xdist controller, or pytest
    alone), from the start of the run loop to the end of the session."""

    def __init__(self, config: pytest.Config, mode: str, interval_s: float, folder: Path) -> None:
        self.config = config
        self.mode = mode
        self.interval_s = interval_s
        self.folder = folder
        self.display: Display | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if self.mode == "off" or self.config.option.collectonly or self.display is not None:
            return
        fd = terminal_fd()
        if fd is None:
            return
        tty = os.isatty(fd) and environment().term != "dumb"
        live = self.mode == "live" or (self.mode == "auto" and tty)
        self.folder.mkdir(parents=True, exist_ok=True)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        self.display = Display(
            self.folder, fd, live=live, interval_s=self.interval_s, reporter=reporter
        )
        self.display.start()

    def paused(self) -> contextlib.AbstractContextManager[None]:
        return self.display.paused() if self.display is not None else contextlib.nullcontext()

    def _quiet(self) -> Generator[None, object, object]:
        with self.paused():
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self) -> Generator[None, object, object]:
        return (yield from self._quiet())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self) -> Generator[None, object, object]:
        return (yield from self._quiet())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self) -> Generator[None, object, object]:
        return (yield from self._quiet())

    @pytest.hookimpl(wrapper=True, optionalhook=True)
    def pytest_testnodedown(self) -> Generator[None, object, object]:
        return (yield from self._quiet())

    @pytest.hookimpl(wrapper=True, optionalhook=True)
    def pytest_testnodeready(self) -> Generator[None, object, object]:
        return (yield from self._quiet())

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.display is not None:
            self.display.stop()
            self.display = None


def paused(config: pytest.Config) -> contextlib.AbstractContextManager[None]:
    """Hold the live lines off the terminal while the caller writes to it."""
    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if isinstance(plugin, ProgressPlugin):
        return plugin.paused()
    return contextlib.nullcontext()

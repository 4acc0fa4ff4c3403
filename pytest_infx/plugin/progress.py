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
import json
import os
import re
import sys
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_infx.files.atomic import atomic_write_bytes

Kind = Literal["cell", "point", "preparing", "server", "waiting", "queued"]
FOLDER = "progress"
FLUSH_S = 0.5
LIVE_TICK_S = 1.0
TAIL_BYTES = 8192
PLUGIN_NAME = "infx-progress"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Activity:
    """What one process is doing now. Times are epoch seconds, comparable between processes;
    ``log`` is the server log (or aiperf's console log) whose last line is shown."""

    worker: str
    kind: Kind
    name: str
    started: float
    done: int = 0
    total: int = 0
    failed: int = 0
    tokens: int = 0
    log: str | None = None
    duration_s: float | None = None
    pid: int = 0


def clock(seconds: float) -> str:
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def last_line(path: str | None, width: int = 200) -> str:
    """The last non-empty line of a log, read from its end (server logs grow to gigabytes)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - TAIL_BYTES))
            data = handle.read()
    except OSError:
        return ""
    for raw in reversed(data.decode("utf-8", "replace").splitlines()):
        text = " ".join(_CONTROL.sub(" ", _ANSI.sub("", raw)).split())
        if text:
            return text[-width:]
    return ""


def render(activity: Activity, now: float, *, tagged: bool) -> str:
    """One line: the worker, what it runs, done/total, output tokens/s, elapsed and ETA."""
    a = activity
    head = f"infx [{a.worker}]" if tagged else "infx"
    elapsed = max(0.0, now - a.started)
    if a.kind == "queued":
        return f"{head} {a.name} ({clock(elapsed)})"
    if a.kind == "preparing":
        return f"{head} preparing the server of {a.name}: engine, checkpoint ({clock(elapsed)})"
    if a.kind in ("server", "waiting"):
        verb = "starting server" if a.kind == "server" else "waiting for server"
        text = f"{head} {verb} {a.name} ({clock(elapsed)})"
        tail = last_line(a.log) if a.kind == "server" else ""
        return f"{text}: {tail}" if tail else text
    parts: list[str] = []
    if a.kind == "cell":
        parts.append(f"{a.done}/{a.total} requests")
        if a.failed:
            parts.append(f"{a.failed} failed")
        parts.append(f"{a.tokens / elapsed if elapsed > 0 else 0.0:.1f} output tok/s")
    parts.append(f"elapsed {clock(elapsed)}")
    if a.kind == "cell" and 0 < a.done < a.total:
        parts.append(f"ETA {clock(elapsed / a.done * (a.total - a.done))}")
    elif a.kind == "point" and a.duration_s:
        parts.append(f"ETA {clock(a.duration_s - elapsed)}" if elapsed < a.duration_s else "ending")
    text = f"{head} {a.name}: " + ", ".join(parts)
    if a.kind == "point":
        tail = last_line(a.log)
        if tail:
            text += f" | {tail}"
    return text


class Tracker:
    """This process's current activity, mirrored to ``<folder>/<worker>.json``.

    Request completions only touch memory (they happen inside the client's event loop); a
    thread writes the file at most every ``flush_s``. A new activity or idleness is written at
    once, so the display never shows a finished cell as running.
    """

    def __init__(self, folder: Path | None, worker: str, *, flush_s: float = FLUSH_S) -> None:
        self.path = folder / f"{worker}.json" if folder is not None else None
        self.worker = worker
        self.flush_s = flush_s
        self._lock = threading.Lock()
        self._flushing = threading.Lock()
        self._activity: Activity | None = None
        self._version = 0
        self._written = 0
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def activity(self) -> Activity | None:
        return self._activity

    def begin(self, kind: Kind, name: str, **fields: Any) -> None:
        self._set(Activity(self.worker, kind, name, time.time(), pid=os.getpid(), **fields))

    def idle(self) -> None:
        self._set(None)

    @contextlib.contextmanager
    def doing(self, kind: Kind, name: str, **fields: Any) -> Iterator[None]:
        self.begin(kind, name, **fields)
        try:
            yield
        finally:
            self.idle()

    def request_done(self, tokens: int | None, *, ok: bool) -> None:
        with self._lock:
            found = self._activity
            if found is None or found.kind != "cell":
                return
            self._activity = replace(
                found,
                done=found.done + 1,
                failed=found.failed + (0 if ok else 1),
                tokens=found.tokens + (tokens or 0),
            )
            self._version += 1

    def _set(self, activity: Activity | None) -> None:
        with self._lock:
            self._activity = activity
            self._version += 1
        self.flush()
        if activity is not None and self.path is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="infx-progress", daemon=True)
            self._thread.start()

    def flush(self) -> None:
        """Write the newest activity; flushes are serialised, so an older one never lands
        after a newer one."""
        if self.path is None:
            return
        with self._flushing:
            with self._lock:
                activity, version = self._activity, self._version
            if version == self._written:
                return
            try:
                if activity is None:
                    self.path.unlink(missing_ok=True)
                else:
                    data = json.dumps(asdict(activity)).encode()
                    atomic_write_bytes(self.path, data, durable=False)
            except OSError:
                return
            self._written = version

    def _run(self) -> None:
        while not self._closed.wait(self.flush_s):
            self.flush()

    def close(self) -> None:
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def read_activities(folder: Path) -> list[Activity]:
    """Every live process's activity. A file being replaced is skipped this time; the file of
    a worker that died (xdist replaces a crashed worker under a new name) is skipped for good."""
    found: list[Activity] = []
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return found
    for path in paths:
        try:
            activity = Activity(**json.loads(path.read_bytes()))
        except (OSError, ValueError, TypeError):
            continue
        if _alive(activity.pid):
            found.append(activity)
    return found


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def worker_id() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def tracker_for(folder: Path | None, mode: str) -> Tracker:
    """The tracker of this process; its file goes to ``folder``, where the controller's display
    reads (under Slurm, a folder on the shared results filesystem, since a job's own run folder
    is on its node)."""
    shown = None if mode == "off" else folder
    if shown is not None:
        shown.mkdir(parents=True, exist_ok=True)
    return Tracker(shown, worker_id())


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
        tty = os.isatty(fd) and os.environ.get("TERM") != "dumb"
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

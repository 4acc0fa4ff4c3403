"""What each process that runs items is doing, kept in a small JSON file a process under the run
folder (``progress/<worker>.json``), written by a thread so the benchmark's event loop never
waits on the disk; :mod:`.progress` renders them all where the terminal is."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pytest_infx.files.atomic import atomic_write_bytes
from pytest_infx.settings import environment

Kind = Literal["cell", "point", "preparing", "server", "waiting", "queued"]
FOLDER = "progress"
FLUSH_S = 0.5
LIVE_TICK_S = 1.0
TAIL_BYTES = 8192
PLUGIN_NAME = "infx-progress"
ELLIPSIS = "... "
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
            return _end_of(text, width)
    return ""


def _end_of(text: str, width: int) -> str:
    """The end of a long line, started at a word: a server line cut inside a word reads as
    another word (``rror: ...``)."""
    if len(text) <= width:
        return text
    end = text[-(width - len(ELLIPSIS)) :]
    space = end.find(" ")
    return ELLIPSIS + (end[space + 1 :] if space >= 0 else end)


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
    return environment().xdist_worker or "main"


def tracker_for(folder: Path | None, mode: str) -> Tracker:
    """The tracker of this process; its file goes to ``folder``, where the controller's display
    reads (under Slurm, a folder on the shared results filesystem, since a job's own run folder
    is on its node)."""
    shown = None if mode == "off" else folder
    if shown is not None:
        shown.mkdir(parents=True, exist_ok=True)
    return Tracker(shown, worker_id())

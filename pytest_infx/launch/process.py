from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import signal
import subprocess
import time
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_infx.files.atomic import atomic_write_text
from pytest_infx.http1 import HTTPError, fetch
from pytest_infx.launch.gpus import Lease
from pytest_infx.launch.guard import command as guard_command
from pytest_infx.launch.guard import end_groups
from pytest_infx.launch.ports import choose_port, claims_dir, port_holders
from pytest_infx.launch.procfs import is_alive, proc_stat
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.spec import LocalRuntime, ServerSpec
from pytest_infx.secrets import shown_argv

log = logging.getLogger("pytest_infx.launch")

GUARD = Path(__file__).with_name("guard.py")
TAIL_LINES = 40
_PORT_IN_USE = re.compile(r"address already in use|EADDRINUSE|\[Errno 98\]", re.IGNORECASE)


class ServerStartError(RuntimeError):
    """A server exited or never became ready; the message carries the command and log tail."""

    def __init__(self, message: str, *, port_in_use: bool = False) -> None:
        super().__init__(message)
        self.port_in_use = port_in_use


class ServerRetryWarning(UserWarning):
    """A server start failed and is being tried again; the warning says why and where the failed
    start's log is, since the retry itself succeeds and would otherwise leave no word."""


class ServerDiedError(RuntimeError):
    """A server that was ready has exited while items still use it."""


def log_tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last lines of a log, read from its end so a multi-gigabyte log costs nothing."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 256 * 1024))
            data = f.read()
    except OSError as exc:
        return f"(log {path} unreadable: {exc})"
    text = data.decode(errors="replace").splitlines()
    return "\n".join(text[-lines:])


def describe_status(code: int) -> str:
    """Popen's negative codes and the guard's 128+N both mean death by a signal."""
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    if signum in signal.valid_signals():
        return f"was killed by {signal.Signals(signum).name}"
    return f"exited with code {code}"


def _report(what: str, *, label: str, argv: tuple[str, ...], log_path: Path) -> str:
    return (
        f"server {label!r} {what}\n"
        f"command: {shlex.join(argv)}\n"
        f"log: {log_path}\n"
        f"--- last {TAIL_LINES} lines of the log ---\n"
        f"{log_tail(log_path)}"
    )


@dataclass
class RunningServer:
    """One launched server: its guard process is the group leader, so `pid == pgid`."""

    label: str
    host: str
    port: int
    argv: tuple[str, ...]
    log_path: Path
    pid: int
    start_ticks: int
    gpu_ids: tuple[int, ...]
    grace_s: float
    port_note: str | None = None
    spawned_at: float = 0.0
    ready_after_s: float | None = None
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def pgid(self) -> int:
        return self.pid

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def returncode(self) -> int | None:
        """The exit status, or None while running; works for servers another process started."""
        if self.popen is not None:
            return self.popen.poll()
        return None if is_alive(self.pid, self.start_ticks) else -1

    def ensure_alive(self) -> None:
        code = self.returncode()
        if code is not None:
            what = describe_status(code) if self.popen is not None else "is gone"
            raise ServerDiedError(
                _report(
                    f"{what} while in use", label=self.label, argv=self.argv, log_path=self.log_path
                )
            )

    def stop(self) -> None:
        stop_group(self.pid, start_ticks=self.start_ticks, grace_s=self.grace_s, popen=self.popen)


def stop_group(
    pgid: int,
    *,
    start_ticks: int,
    grace_s: float,
    popen: subprocess.Popen[Any] | None = None,
) -> None:
    """Stop a group a guard leads: TERM, grace, KILL, reap.

    While the guard lives the TERM goes to it alone (it relays it and waits its own grace); the
    wait here is two seconds longer, so the guard's KILL comes first.
    """
    relay = is_alive(pgid, start_ticks)
    poll = popen.poll if popen is not None else None
    if end_groups([pgid], grace_s + 2.0, relay=relay, poll=poll):
        log.warning("process group %d still alive after %.0f s; sent SIGKILL", pgid, grace_s)
    if popen is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=5)


def start_guarded(argv: Sequence[str], *, grace_s: float, **popen_args: Any) -> Guarded:
    """Start a helper tool (aiperf, pip) under the guard, like an engine: it cannot outlive
    this process, even one killed with SIGKILL."""
    cmd = guard_command(argv, grace_s=grace_s, parent_pid=os.getpid())
    popen: subprocess.Popen[Any] = subprocess.Popen(cmd, start_new_session=True, **popen_args)
    st = proc_stat(popen.pid)
    return Guarded(popen, st.start_ticks if st else -1, grace_s)


@dataclass(frozen=True)
class Guarded:
    """A helper tool under its guard; the guard's status is the tool's."""

    popen: subprocess.Popen[Any]
    start_ticks: int
    grace_s: float

    def stop(self) -> None:
        stop_group(
            self.popen.pid, start_ticks=self.start_ticks, grace_s=self.grace_s, popen=self.popen
        )


def write_files(spec: ServerSpec, log_path: Path) -> str:
    """The server's files, each written whole, beside its log (``<log>.files/``), where a
    reader of the log finds what the engine was given."""
    folder = log_path.with_name(log_path.stem + ".files")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in spec.files.items():
        atomic_write_text(folder / name, text)
    return str(folder.resolve())


def spawn(
    spec: ServerSpec,
    *,
    port: int,
    log_path: Path,
    registry: Registry,
    lease: Lease | None = None,
    grace_s: float = 30.0,
    claim: int | None = None,
) -> RunningServer:
    """Start the engine under its guard, in a new session, logging to `log_path`; the guard
    and the engine inherit the lease's locks and the port's claim, so both last as long as
    the server."""
    gpu_ids = lease.ids if lease else ()
    fds = (*(lease.fds if lease else ()), *(() if claim is None else (claim,)))
    container = f"infx-{spec.label}-{uuid.uuid4().hex[:12]}"
    files_dir = write_files(spec, log_path) if spec.files else None
    argv, extra_env = spec.command(
        port=port, gpu_ids=gpu_ids, container_name=container, files_dir=files_dir
    )
    cleanup = spec.cleanup_argv(container)
    cmd = guard_command(
        argv, grace_s=grace_s, parent_pid=os.getpid(), cleanup=cleanup or (), pass_fds=fds
    )
    env = dict(os.environ)
    env.update(extra_env)
    cwd = getattr(spec.runtime, "cwd", None)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as logf:
        spawned_at = time.monotonic()
        try:
            popen = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,
                pass_fds=fds,
            )
        except OSError as exc:
            raise ServerStartError(
                f"server {spec.label!r} could not be launched: {exc}\n"
                f"command: {shlex.join(shown_argv(argv))}"
            ) from exc
    st = proc_stat(popen.pid)
    registry.record(pgid=popen.pid, label=spec.label)
    return RunningServer(
        label=spec.label,
        host=spec.host,
        port=port,
        argv=argv,
        log_path=log_path,
        pid=popen.pid,
        start_ticks=st.start_ticks if st else -1,
        gpu_ids=gpu_ids,
        grace_s=grace_s,
        spawned_at=spawned_at,
        popen=popen,
    )


def probe(host: str, port: int, path: str, *, timeout: float) -> int | None:
    """HTTP status of one GET, or None while nothing answers (refused, reset, timed out, or an
    answer that is not HTTP). The same client as the measurements, so one HTTP stack decides
    both whether a server is ready and what it answered."""
    try:
        response = asyncio.run(fetch(f"http://{host}:{port}", "GET", path, timeout_s=timeout))
    except HTTPError:
        return None
    return response.status


def _foreign_listener(server: RunningServer, spec: ServerSpec) -> str | None:
    """Who else listens on our port: vLLM listens only after loading the model, so another
    process can bind the chosen port first, and a health probe alone would benchmark it.
    Every listener counts, not the first one found, since processes of one user can share a
    port (SO_REUSEPORT)."""
    if not isinstance(spec.runtime, LocalRuntime):
        return None
    for holder in port_holders(server.port, listening=True):
        if holder.pid is None:
            continue
        try:
            group = os.getpgid(holder.pid)
        except ProcessLookupError:
            continue
        if group != server.pgid:
            return holder.describe()
    return None


def wait_ready(server: RunningServer, spec: ServerSpec, *, deadline: float) -> None:
    """Poll the health endpoint and the process status under one deadline.

    Connection refused and 503 both mean "not yet" (vLLM listens late, SGLang answers 503 while
    loading); an exit ends the wait at once instead of at the deadline.
    """
    interval = 0.02
    last_status: int | None = None
    while True:
        code = server.returncode()
        if code is not None:
            elapsed = time.monotonic() - server.spawned_at
            text = log_tail(server.log_path)
            raise ServerStartError(
                _report(
                    f"{describe_status(code)} during start-up (after {elapsed:.1f} s)",
                    label=server.label,
                    argv=server.argv,
                    log_path=server.log_path,
                ),
                port_in_use=bool(_PORT_IN_USE.search(text)),
            )
        remaining = deadline - time.monotonic()
        status = probe(
            server.host, server.port, spec.health_path, timeout=max(0.05, min(2.0, remaining))
        )
        if status is not None:
            last_status = status
            if status in spec.ready_statuses:
                intruder = _foreign_listener(server, spec)
                if intruder is not None:
                    server.stop()
                    raise ServerStartError(
                        _report(
                            f"port {server.port} answered, but from {intruder} (it took the port "
                            "while the engine was starting); the engine was stopped",
                            label=server.label,
                            argv=server.argv,
                            log_path=server.log_path,
                        ),
                        port_in_use=True,
                    )
                server.ready_after_s = time.monotonic() - server.spawned_at
                return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            server.stop()
            answer = f"last answer HTTP {last_status}" if last_status else "never answered"
            raise ServerStartError(
                _report(
                    f"was not ready after {spec.ready_timeout_s:g} s "
                    f"({spec.health_path} {answer}); it was stopped",
                    label=server.label,
                    argv=server.argv,
                    log_path=server.log_path,
                )
            )
        time.sleep(min(interval, remaining))
        interval = min(interval * 1.5, 0.25)


def start_server(
    spec: ServerSpec,
    *,
    log_path: Path,
    registry: Registry,
    lease: Lease | None = None,
    grace_s: float = 30.0,
    claims: Path | None = None,
) -> RunningServer:
    """Choose a port, launch, wait until ready; retry once on a new port if the chosen one was
    taken between the bind test and the server's own bind.

    The port is claimed in `claims` (default: this user's folder of claims, shared by every
    pytest run of the user), so two servers of this user never choose one port at once."""
    lost: set[int] = set()
    attempt_log = log_path
    folder = claims_dir() if claims is None else claims
    while True:
        choice = choose_port(spec.host, spec.preferred_port, exclude=lost, claims=folder)
        try:
            server = spawn(
                spec,
                port=choice.port,
                log_path=attempt_log,
                registry=registry,
                lease=lease,
                grace_s=grace_s,
                claim=choice.claim,
            )
        finally:
            choice.release()
        server.port_note = choice.note
        try:
            wait_ready(server, spec, deadline=server.spawned_at + spec.ready_timeout_s)
        except ServerStartError as exc:
            if exc.port_in_use and not lost:
                why = (
                    f"server {spec.name!r}: its start on port {choice.port} failed because "
                    f"another process took the port (log: {attempt_log}); retrying on a new port"
                )
                log.warning("%s", why)
                warnings.warn(ServerRetryWarning(why), stacklevel=2)
                lost.add(choice.port)
                attempt_log = log_path.with_name(log_path.stem + ".retry" + log_path.suffix)
                continue
            raise
        return server

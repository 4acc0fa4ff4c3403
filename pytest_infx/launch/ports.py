from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from pytest_infx.files.locks import try_lock
from pytest_infx.launch.procfs import cmdline, is_alive

log = logging.getLogger("pytest_infx.launch")

_TIME_WAIT = "06"
_LISTEN = "0A"


@dataclass(frozen=True)
class PortHolder:
    pid: int | None
    command: str

    def describe(self) -> str:
        if self.pid is None:
            return "a process this user cannot see"
        return f"pid {self.pid} ({self.command or 'command line unreadable'})"


@dataclass(frozen=True)
class PortChoice:
    """The port to serve on and, when the preferred one was taken, the line that says why.

    `claim` is the descriptor of the port's claim (see :func:`claim_port`), which the server's
    guard inherits so that the claim lasts exactly as long as the server."""

    port: int
    preferred: int
    note: str | None = None
    claim: int | None = field(default=None, compare=False, repr=False)

    def release(self) -> None:
        """Close this process's copy of the claim (the guard keeps its own)."""
        _unclaim(self.claim)


def _unclaim(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def claims_dir() -> Path:
    """Where this user's servers claim their ports: one folder for every pytest run of the
    user on this machine, since two runs (two xdist workers' pytester runs, two users' shells
    on one GPU node) pick ports from the same preferred one."""
    return Path(tempfile.gettempdir()) / f"pytest-infx-{os.getuid()}" / "ports"


def claim_port(directory: Path, port: int) -> tuple[int | None, PortHolder | None]:
    """Claim a port for one server with a kernel lock on ``<directory>/<port>.lock``.

    Returns the lock's descriptor, or the claimant when another server holds the port. A
    bind test cannot see a port another start has chosen but not bound yet (an engine binds
    only after its imports, seconds later), and vLLM binds with SO_REUSEADDR and listens only
    after loading the model, so two starts that choose the same port both bind it and one of
    them fails minutes later; a claim is taken at the choice. The kernel drops it when the
    last holder (the server's guard and engine) exits.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / f"{port}.lock"
    fd = try_lock(path, 0o600)
    if fd is not None:
        os.pwrite(fd, f"{os.getpid():<20}".encode(), 0)
        return fd, None
    text = _claimant(path)
    if not text.isdigit():
        return None, PortHolder(pid=None, command="")
    pid = int(text)
    return None, PortHolder(pid=pid, command=cmdline(pid) if is_alive(pid) else "exited")


def _claimant(path: Path, wait_s: float = 1.0) -> str:
    """The claimant's pid as its claim file says; a claim taken a moment ago may not have
    written it yet, so an empty file is read again for a short while."""
    deadline = time.monotonic() + wait_s
    while True:
        text = path.read_bytes()[:20].decode(errors="replace").strip()
        if text or time.monotonic() >= deadline:
            return text
        time.sleep(0.01)


def _binds(family: socket.AddressFamily, host: str, port: int, *, reuse: bool) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def port_is_free(host: str, port: int) -> bool:
    """Whether a server can have the port: a bind with SO_REUSEADDR succeeds, as servers
    bind, so sockets in TIME_WAIT do not count; and no socket is merely bound there. A
    bound socket that does not listen yet (vLLM's, while it loads the model) lets another
    SO_REUSEADDR bind succeed and is missing from /proc/net/tcp; only a plain bind fails on
    it, and a plain bind also fails on TIME_WAIT, which /proc/net/tcp does show."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if not _binds(family, host, port, reuse=True):
        return False
    return _binds(family, host, port, reuse=False) or _time_wait(port)


def free_port(host: str, *, exclude: Collection[int] = ()) -> int:
    """A port the kernel reports free now; the caller must still expect to lose it to a race."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(64):
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = int(sock.getsockname()[1])
        if port not in exclude:
            return port
    raise OSError(f"no free TCP port on {host} after 64 tries")


def _table_rows(port: int) -> list[tuple[str, str]]:
    """(state, socket inode) of each /proc/net/tcp{,6} row whose local port is `port`."""
    rows: list[tuple[str, str]] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            next(f, None)
            for line in f:
                cols = line.split()
                if len(cols) >= 10 and int(cols[1].rsplit(":", 1)[1], 16) == port:
                    rows.append((cols[3], cols[9]))
    return rows


def _time_wait(port: int) -> bool:
    return any(state == _TIME_WAIT for state, _ in _table_rows(port))


def _socket_inodes(port: int, *, listening: bool) -> set[str]:
    return {
        inode
        for state, inode in _table_rows(port)
        if state != _TIME_WAIT and inode != "0" and (state == _LISTEN or not listening)
    }


def port_holders(port: int, *, listening: bool = False) -> list[PortHolder]:
    """Every process with a socket on a TCP port (with `listening`, a listening one), via
    /proc/net/tcp{,6} socket inodes and /proc/*/fd links; one holder with pid None stands
    for sockets whose owners' file descriptors this user cannot read."""
    inodes = _socket_inodes(port, listening=listening)
    if not inodes:
        return []
    targets = {f"socket:[{inode}]" for inode in inodes}
    found: list[PortHolder] = []
    seen: set[str] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fd_dir = f"/proc/{name}/fd"
        held: set[str] = set()
        with contextlib.suppress(OSError):
            for fd in os.listdir(fd_dir):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"{fd_dir}/{fd}")
                    if target in targets:
                        held.add(target)
        if held:
            seen |= held
            found.append(PortHolder(pid=int(name), command=cmdline(int(name))))
    if seen != targets:
        found.append(PortHolder(pid=None, command=""))
    return found


def port_holder(port: int) -> PortHolder | None:
    """Who holds a TCP port: the first of :func:`port_holders`, or None if no socket uses it."""
    holders = port_holders(port)
    return holders[0] if holders else None


def _claimed(claims: Path | None, port: int) -> tuple[int | None, PortHolder | None]:
    return claim_port(claims, port) if claims is not None else (None, None)


def _free_claimed(
    host: str, exclude: Collection[int], claims: Path | None
) -> tuple[int, int | None]:
    taken = set(exclude)
    for _ in range(64):
        port = free_port(host, exclude=taken)
        fd, claimant = _claimed(claims, port)
        if claimant is None:
            return port, fd
        taken.add(port)
    raise OSError(f"no free, unclaimed TCP port on {host} after 64 tries")


def choose_port(
    host: str, preferred: int, *, exclude: Collection[int] = (), claims: Path | None = None
) -> PortChoice:
    """Serve on the preferred port if it is free (and, with `claims`, no other server of this
    user has claimed it); else name who has it and take a free port. With `claims`, the
    chosen port comes claimed."""
    claimant = None
    if preferred not in exclude:
        fd, claimant = _claimed(claims, preferred)
        if claimant is None:
            if port_is_free(host, preferred):
                return PortChoice(port=preferred, preferred=preferred, claim=fd)
            _unclaim(fd)
    port, fd = _free_claimed(host, set(exclude) | {preferred}, claims)
    if preferred in exclude:
        note = f"port {preferred} was lost to another process during start-up; serving on {port}"
    elif claimant is not None:
        note = (
            f"port {preferred} is claimed by another pytest-infx server (started by "
            f"{claimant.describe()}); serving on {port} instead"
        )
    else:
        holder = port_holder(preferred)
        who = holder.describe() if holder else "a socket that is bound but not listening (or gone)"
        note = f"port {preferred} is held by {who}; serving on {port} instead"
    log.warning(note)
    return PortChoice(port=port, preferred=preferred, note=note, claim=fd)

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Collection
from dataclasses import dataclass

from pytest_infx.launch.procfs import cmdline

log = logging.getLogger("pytest_infx.launch")

_TIME_WAIT = "06"


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
    """The port to serve on and, when the preferred one was taken, the line that says why."""

    port: int
    preferred: int
    note: str | None = None


def port_is_free(host: str, port: int) -> bool:
    """A bind test with SO_REUSEADDR, as servers bind, so sockets in TIME_WAIT do not count."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


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


def _socket_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            next(f, None)
            for line in f:
                cols = line.split()
                if len(cols) < 10:
                    continue
                local_port = int(cols[1].rsplit(":", 1)[1], 16)
                if local_port == port and cols[3] != _TIME_WAIT and cols[9] != "0":
                    inodes.add(cols[9])
    return inodes


def port_holder(port: int) -> PortHolder | None:
    """Who holds a TCP port, via /proc/net/tcp{,6} socket inodes and /proc/*/fd links.

    Returns None if no socket uses the port; a holder with pid None if the socket exists but
    its owner's file descriptors are not readable by this user.
    """
    inodes = _socket_inodes(port)
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fd_dir = f"/proc/{name}/fd"
        with contextlib.suppress(OSError):
            for fd in os.listdir(fd_dir):
                with contextlib.suppress(OSError):
                    if os.readlink(f"{fd_dir}/{fd}") in targets:
                        pid = int(name)
                        return PortHolder(pid=pid, command=cmdline(pid))
    return PortHolder(pid=None, command="")


def choose_port(host: str, preferred: int, *, exclude: Collection[int] = ()) -> PortChoice:
    """Serve on the preferred port if it is free; else name its holder and take a free one."""
    if preferred not in exclude and port_is_free(host, preferred):
        return PortChoice(port=preferred, preferred=preferred)
    port = free_port(host, exclude=set(exclude) | {preferred})
    if preferred in exclude:
        note = f"port {preferred} was lost to another process during start-up; serving on {port}"
    else:
        holder = port_holder(preferred)
        who = holder.describe() if holder else "a socket that is already gone"
        note = f"port {preferred} is held by {who}; serving on {port} instead"
    log.warning(note)
    return PortChoice(port=port, preferred=preferred, note=note)

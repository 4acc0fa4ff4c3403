from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from pytest_infx.launch.guard import stat_fields


@dataclass(frozen=True)
class ProcStat:
    """The few /proc/<pid>/stat fields that identify a process and its group.

    `start_ticks` tells a process apart from a later one that reuses its pid.
    """

    pid: int
    state: str
    ppid: int
    pgrp: int
    start_ticks: int

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")


def proc_stat(pid: int) -> ProcStat | None:
    fields = stat_fields(pid)
    if fields is None:
        return None
    return ProcStat(
        pid=pid,
        state=fields[0].decode(),
        ppid=int(fields[1]),
        pgrp=int(fields[2]),
        start_ticks=int(fields[19]),
    )


def is_alive(pid: int, start_ticks: int | None = None) -> bool:
    """True for a running process; a zombie counts as dead, unlike `os.kill(pid, 0)`."""
    st = proc_stat(pid)
    if st is None or not st.alive:
        return False
    return start_ticks is None or st.start_ticks == start_ticks


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None and st.pgrp == pgid and st.alive:
                found.append(st.pid)
    return found


def cmdline(pid: int) -> str:
    """The command line of a process, or '' where it cannot be read."""
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            parts = f.read().split(b"\0")
        return " ".join(p.decode(errors="replace") for p in parts if p)
    return ""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.launch.guard import end_groups
from pytest_infx.launch.procfs import group_members, proc_stat


@dataclass(frozen=True)
class RegistryEntry:
    pgid: int
    start_ticks: int
    label: str
    owner_pid: int


class Registry:
    """Append-only record of every process group started during one pytest run.

    Each entry is one short line written with a single O_APPEND write, so concurrent xdist
    workers never interleave; the sweep at the end of the run reads them all.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def record(self, *, pgid: int, label: str) -> RegistryEntry:
        st = proc_stat(pgid)
        entry = RegistryEntry(
            pgid=pgid,
            start_ticks=st.start_ticks if st else -1,
            label=label,
            owner_pid=os.getpid(),
        )
        line = json.dumps(entry.__dict__, sort_keys=True) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        return entry

    def entries(self) -> list[RegistryEntry]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        found = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError):
                found.append(RegistryEntry(**json.loads(line)))
        return found


def _still_ours(entry: RegistryEntry) -> bool:
    """The group exists and was not recycled: its leader is ours, or it is gone but members remain.

    A pgid cannot be reused while any member of the old group lives, so members without a
    leader are still the engine's.
    """
    leader = proc_stat(entry.pgid)
    if leader is not None and leader.pgrp == entry.pgid:
        return leader.start_ticks == entry.start_ticks or not leader.alive
    return bool(group_members(entry.pgid))


def sweep(registry: Registry, *, grace_s: float = 5.0) -> list[RegistryEntry]:
    """Kill process groups of this run that are still alive; returns what had to be killed.

    Meant for `pytest_unconfigure`: after a clean run it finds nothing; after a crash of a
    worker it removes what the guard could not.
    """
    leftovers = [e for e in registry.entries() if group_members(e.pgid) and _still_ours(e)]
    if leftovers:
        end_groups([e.pgid for e in leftovers], grace_s)
    return leftovers

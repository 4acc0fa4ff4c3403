"""Kernel file locks held as bare descriptors.

A descriptor, unlike a lock object, can be handed to a server's guard, so what it guards (a GPU
of a lease, a port's claim) lives exactly as long as the server, whichever process stops it,
and the kernel frees it when every holder has exited. The lock is filelock's flock() primitive,
the call UnixFileLock makes, never a soft lock a dead holder would keep.
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock import lock_descriptor


def try_lock(path: Path, mode: int = 0o644) -> int | None:
    """The descriptor of ``path`` locked now, or None when another holder has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        if lock_descriptor(fd, blocking=False):
            return fd
    except OSError:
        os.close(fd)
        raise
    os.close(fd)
    return None

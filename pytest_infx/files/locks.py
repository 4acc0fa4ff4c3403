"""Every lock pytest-infx takes: a kernel ``flock`` on a file or a folder.

A kernel lock is released when its holder dies, so a killed run never leaves a lock another
must break by hand; a soft lock (a marker file) would. The three forms differ only in what
holds the lock:

- :func:`kernel_lock`: a lock object on a lock file, for a block of code (a shared server's
  state, a checkpoint download, a tool environment's install), with a timeout;
- :func:`try_lock`: a bare descriptor, which can be handed to a server's guard so what it guards
  (a GPU of a lease, a port's claim) lives exactly as long as the server, whichever process
  stops it;
- :func:`folder_lock`: the folder's own descriptor, for writers of files in it: a lock file
  beside the file it guards would be left behind (removing it while another process waits on
  it would let a third lock a new file of the same name), and a results or golden folder
  should hold results only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from filelock import Timeout, UnixFileLock, lock_descriptor

__all__ = ["KernelLock", "Timeout", "folder_lock", "kernel_lock", "try_lock"]

KernelLock = UnixFileLock


def kernel_lock(path: Path, *, timeout: float = -1) -> KernelLock:
    """A lock on ``path`` that never degrades to a soft lock a dead holder would keep; the
    file stays (removing it would race a waiter). ``acquire`` raises :class:`Timeout` after
    ``timeout`` seconds (``-1``: waits as long as it takes)."""
    return KernelLock(str(path), timeout=timeout, fallback_to_soft=False, preserve_lock_file=True)


def try_lock(path: Path, mode: int = 0o644) -> int | None:
    """The descriptor of ``path`` locked now, or None when another holder has it. The lock is
    filelock's flock() primitive, the call :func:`kernel_lock` makes, so the two exclude each
    other on one file."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        if lock_descriptor(fd, blocking=False):
            return fd
    except OSError:
        os.close(fd)
        raise
    os.close(fd)
    return None


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` itself (made when missing) while the block runs;
    creates nothing in it."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)

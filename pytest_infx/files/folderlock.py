"""A kernel lock on a folder itself, for writers of files in it.

A lock file beside the file it guards is left behind (removing it while another process waits
on it would let a third lock a new file of the same name); a results folder should hold results
only. ``flock`` on the folder's own descriptor is released when the holder dies, like any kernel
lock, and creates nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)

"""Usage errors: a value a person typed (an option, an ini key, an environment variable) that
cannot be used, found before anything starts.

Each is one line naming the option or key, the value and what is accepted, and the run ends with
pytest's usage exit status (4), from ``pytest`` and from ``infx`` alike, instead of a traceback
from deep inside the run it would have broken.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

EXIT_STATUS = 4


class UsageError(ValueError):
    """``str()`` is the whole one-line message."""


_NOT_A_FOLDER = (
    (stat.S_ISREG, "is a file, not a folder"),
    (stat.S_ISFIFO, "is a pipe, not a folder"),
    (stat.S_ISCHR, "is a character device, not a folder"),
    (stat.S_ISBLK, "is a block device, not a folder"),
    (stat.S_ISSOCK, "is a socket, not a folder"),
)
_STAT_FAULTS = {
    errno.ELOOP: "is a symbolic link loop",
    errno.ENAMETOOLONG: "is too long a path",
    errno.ENOTDIR: "is under a file, not a folder",
    errno.EACCES: "cannot be reached (permission denied)",
}


def _not_a_folder(path: Path) -> str | None:
    """What ``path`` is instead of a folder (a file, a pipe, a link loop, a path too long);
    None for a folder. A missing path is ``FileNotFoundError``, for the caller to word."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        return _STAT_FAULTS.get(exc.errno or 0, exc.strerror or str(exc))
    if stat.S_ISDIR(mode):
        return None
    return next((text for test, text in _NOT_A_FOLDER if test(mode)), "is not a folder")


def folder_problem(path: Path) -> str | None:
    """Why ``path`` cannot be used as a folder to write into (created when missing), or
    ``None``: the nearest existing folder must be writable."""
    try:
        problem = _not_a_folder(path)
    except (FileNotFoundError, NotADirectoryError):
        problem = None
    if problem is not None:
        return problem
    probe = path
    while not probe.exists():
        if probe.is_symlink():
            return "is a dangling symbolic link"
        parent = probe.parent
        if parent == probe:
            break
        probe = parent
    if not probe.is_dir():
        return f"cannot be created: {probe} is a file"
    if not os.access(probe, os.W_OK | os.X_OK) or not _can_create_in(probe):
        shown = "is" if probe == path else f"cannot be created: {probe} is"
        return f"{shown} not writable"
    return None


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be made in ``folder``: the permission bits say yes to root even
    where nothing can be created (``/proc``, a read-only mount), so one is made and removed."""
    try:
        fd, name = tempfile.mkstemp(prefix=".infx-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def writable_folder(
    what: str, path: Path, accepted: str = "give a folder you can write to"
) -> Path:
    """``path``, or a UsageError naming ``what`` (the option or variable) and the value."""
    problem = folder_problem(path)
    if problem is not None:
        raise UsageError(f"{what} {path}: {problem}; {accepted}")
    return path


def resolved(what: str, path: Path, accepted: str = "give a path without a loop") -> Path:
    """``path`` with its symbolic links followed, or a UsageError when they loop (where
    ``Path.resolve`` raises a RuntimeError that names no option)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:
        errno_ = getattr(exc, "errno", None)
        problem = _STAT_FAULTS.get(errno_ or errno.ELOOP, str(exc))
        raise UsageError(f"{what} {path}: {problem}; {accepted}") from None


def existing_folder(what: str, path: Path, accepted: str = "give an existing folder") -> Path:
    """``path``, or a UsageError that says what it is instead: missing, a file, a pipe, a
    link loop or a dangling link, a path too long."""
    try:
        problem = _not_a_folder(path)
    except FileNotFoundError:
        problem = "is a dangling symbolic link" if path.is_symlink() else "does not exist"
    except NotADirectoryError:
        problem = _STAT_FAULTS[errno.ENOTDIR]
    if problem is not None:
        raise UsageError(f"{what} {path}: {problem}; {accepted}")
    return path


def writable_file(
    what: str, path: Path, accepted: str = "give a file in a folder you can write to"
) -> Path:
    """``path`` as a file to write: not a folder, and in a folder that can take it; else a
    UsageError naming ``what``, instead of an error about the temporary file an atomic write
    makes beside it."""
    if path.is_dir():
        raise UsageError(f"{what} {path}: is a folder; {accepted}")
    problem = folder_problem(path.parent)
    if problem is not None:
        raise UsageError(f"{what} {path}: its folder {path.parent} {problem}; {accepted}")
    return path

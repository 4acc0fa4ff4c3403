"""Reading text files that people edit by hand.

A file saved in another encoding must be reported as that file, at that line and column, with
what to do; a ``UnicodeDecodeError`` from deep inside a rule names neither.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from pytest_infx.files.numbers import positive
from pytest_infx.settings import Environment, environment

LIMIT_VAR = "INFX_MAX_INPUT_MB"
DEFAULT_LIMIT_MB = 256


class InputFileError(OSError):
    """A file given as input that is not read: not a regular file (a device, a pipe, a folder),
    or larger than the limit. ``/dev/zero`` as a dataset would otherwise grow pytest until the
    kernel kills it, and a pipe would block it forever."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(problem)
        self.strerror = problem
        self.filename = str(path)

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def input_limit(env: Environment | None = None) -> int:
    """The largest input file read, in bytes: ``$INFX_MAX_INPUT_MB`` MiB (default 256)."""
    value = ((env or environment()).max_input_mb or "").strip()
    if not value:
        return DEFAULT_LIMIT_MB << 20
    try:
        megabytes = positive(float(value), LIMIT_VAR)
    except ValueError:
        raise InputFileError(
            f"${LIMIT_VAR}", f"{value!r} is not a size; give a positive number of MiB"
        ) from None
    return int(megabytes * (1 << 20))


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISSOCK, "a socket"),
)


_OPEN_FAULTS = {
    errno.ELOOP: "is a symbolic link loop; point the link at a file",
    errno.ENAMETOOLONG: "is a path too long to open; give a shorter one",
    errno.EACCES: "cannot be read (permission denied); make it readable",
    errno.ENOTDIR: "is under something that is not a folder; check the path",
    errno.ENXIO: "is a socket or a device without a reader; give a file",
}


def open_fault(path: Path | str, exc: OSError) -> InputFileError | None:
    """The one-line error of a file that cannot be opened for what it is; None for a missing
    file, which callers word for themselves."""
    problem = _OPEN_FAULTS.get(exc.errno or 0)
    if problem is not None:
        return InputFileError(path, problem)
    if exc.errno == errno.EISDIR:
        return InputFileError(path, "is a folder, not a regular file; give a file")
    return None


def _not_regular(path: Path | str, mode: int) -> InputFileError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return InputFileError(path, f"is {kind}, not a regular file; give a file")


def not_a_file(path: Path | str) -> InputFileError | None:
    """Why ``path`` cannot be read as a file, when it exists as something else (a pipe, a
    device, a folder, a link loop); None for a regular file or nothing at all."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return open_fault(path, exc)
    return None if stat.S_ISREG(mode) else _not_regular(path, mode)


def open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    """A descriptor of ``path`` and its stat when it is a regular file, opened without
    blocking (a pipe is refused before a byte is read); InputFileError naming what it is
    otherwise, ``FileNotFoundError`` when it is missing. The caller closes the descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        fault = open_fault(path, exc)
        if fault is None:
            raise
        raise fault from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _not_regular(path, st.st_mode)
    return fd, st


def read_head(path: Path | str, size: int) -> bytes:
    """The first ``size`` bytes of a regular file, for sniffing what it is; InputFileError for
    anything else."""
    fd, _ = open_regular(path)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def read_input(path: Path | str) -> bytes:
    """The bytes of a regular file no larger than :func:`input_limit`, else InputFileError;
    a missing file is ``FileNotFoundError`` as from ``open``."""
    limit = input_limit()
    fd, st = open_regular(path)
    try:
        too_large = InputFileError(
            path,
            f"is larger than {limit / (1 << 20):g} MiB; raise ${LIMIT_VAR} if it is meant to be",
        )
        if st.st_size > limit:
            raise too_large
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise too_large
        return data
    finally:
        os.close(fd)


class NotUtf8Error(ValueError):
    """A text file holds bytes that are not UTF-8; ``str()`` is the user-facing message."""

    def __init__(self, path: Path, line: int, column: int, byte: int):
        self.path = path
        self.line = line
        self.column = column
        self.byte = byte
        super().__init__(
            f"{path}:{line}:{column}: not valid UTF-8 (byte 0x{byte:02x}); save the file as UTF-8"
        )


def decode_utf8(path: Path, data: bytes) -> str:
    """``data`` (the bytes of ``path``) as text, or NotUtf8Error at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotUtf8Error(path, line, column, data[exc.start]) from None


def read_utf8(path: Path) -> str:
    """The text of ``path``, or NotUtf8Error naming the file, line and column of a bad byte."""
    return decode_utf8(path, read_input(path))

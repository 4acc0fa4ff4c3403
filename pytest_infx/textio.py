"""Reading text files that people edit by hand.

A file saved in another encoding must be reported as that file, at that line and column, with
what to do; a ``UnicodeDecodeError`` from deep inside a rule names neither.
"""

from __future__ import annotations

from pathlib import Path


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
    return decode_utf8(path, path.read_bytes())

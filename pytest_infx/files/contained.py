"""The one reader of a path written in a file: it must stay inside the folder that file's kind
lives in.

A recipe's dataset, a record's golden curve, a checkpoint index's shards are read because a file
names them; ``../../outside``, an absolute path or a symbolic link to ``/etc`` would make the
plugin open, and sometimes print, a file nobody gave it. A path a person types on the command
line or in the ini is theirs to point anywhere, and is not read through here.
"""

from __future__ import annotations

import os
from pathlib import Path


class OutsideFolderError(ValueError):
    """A path from a file that leads out of its folder; ``str()`` names the file, the field, the
    path and the folder."""

    def __init__(self, source: str, field: str, written: str, folder: Path) -> None:
        super().__init__(
            f"{source}: '{field}' is {written!r}, which leads outside {folder}; "
            f"give a path inside {folder}"
        )
        self.field = field
        self.folder = folder


def within(folder: Path, path: Path) -> bool:
    """Whether ``path`` is ``folder`` or under it once both have every symbolic link followed."""
    return path.resolve().is_relative_to(folder.resolve())


def inside(folder: Path, written: str | os.PathLike[str], *, source: str, field: str) -> Path:
    """``written`` (relative to ``folder``, or absolute) as a path that, with every symbolic link
    followed, is ``folder`` or under it; ``source`` (the file that wrote it) and ``field`` name it
    in the error. The path returned is the resolved one, so that what is checked is what is
    opened."""
    top = folder.resolve()
    text = os.fspath(written)
    if "\x00" in text:
        raise OutsideFolderError(source, field, text, top)
    resolved = (top / text).resolve()
    if not within(top, resolved):
        raise OutsideFolderError(source, field, text, top)
    return resolved

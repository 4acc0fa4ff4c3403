"""Config keys from InferenceX's master configs (``configs/*-master.yaml``).

A repository that keeps its benchmark points in master configs, as InferenceX does, names them
by the top-level keys of those files; a changelog entry's config keys must resolve against
them, and the keys whose block changed since the base are the ones a new entry must cover.
A top-level key is a line at column 0, so both are read from bytes without parsing YAML (the
two files are about 10,000 lines); a block is everything up to the next top-level key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.files.git import read_base
from pytest_infx.files.textio import read_input

_NOT_POINTS = re.compile(rb"^[ \t]*(?:#[^\n]*)?(?:\n|\Z)", re.MULTILINE)
_TOP_KEY = re.compile(rb"^([^\s#:'\"\-][^:#\n]*?|'[^'\n]+'|\"[^\"\n]+\")[ \t]*:", re.MULTILINE)


@dataclass(frozen=True)
class MasterBlock:
    """A top-level key of a master config: where it is and the bytes of its block."""

    key: str
    path: Path
    line: int
    block: bytes


def blocks(data: bytes, path: Path) -> dict[str, MasterBlock]:
    """Every top-level key of one master config, with its block less its blank and comment
    lines: those change no point, and a comment above the next key is not this key's."""
    found: dict[str, MasterBlock] = {}
    starts = [m for m in _TOP_KEY.finditer(data) if m.group(1) != b"---"]
    for position, match in enumerate(starts):
        end = starts[position + 1].start() if position + 1 < len(starts) else len(data)
        key = match.group(1).decode("utf-8", "replace").strip("'\"")
        body = _NOT_POINTS.sub(b"", data[match.start() : end])
        line = data.count(b"\n", 0, match.start()) + 1
        found.setdefault(key, MasterBlock(key, path, line, body))
    return found


def master_files(root: Path, pattern: str | None) -> list[Path]:
    if pattern is None:
        return []
    return sorted(path for path in root.glob(pattern) if path.is_file())


def master_keys(root: Path, pattern: str | None) -> dict[str, MasterBlock] | None:
    """Every top-level key of every master config; ``None`` when the repository has none."""
    files = master_files(root, pattern)
    if not files:
        return None
    found: dict[str, MasterBlock] = {}
    for path in files:
        for key, where in blocks(read_input(path), path).items():
            found.setdefault(key, where)
    return found


def master_changes(root: Path, pattern: str | None, base: str) -> dict[str, str] | None:
    """Key -> ``"added"`` or ``"changed"`` for the keys whose block differs from ``base``; a
    removed key needs no entry. ``None`` when there are no master configs or the base cannot
    be read."""
    head = master_keys(root, pattern)
    if head is None:
        return None
    before: dict[str, bytes] = {}
    for path in master_files(root, pattern):
        commit, data = read_base(root, base, path)
        if commit is None:
            return None
        for key, where in blocks(data or b"", path).items():
            before.setdefault(key, where.block)
    return {
        key: "added" if key not in before else "changed"
        for key, where in sorted(head.items())
        if before.get(key) != where.block
    }


def changed_master_keys(root: Path, pattern: str | None, base: str) -> frozenset[str] | None:
    changes = master_changes(root, pattern, base)
    return None if changes is None else frozenset(changes)

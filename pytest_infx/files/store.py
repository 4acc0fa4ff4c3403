"""Derived values kept between runs, keyed by what they were computed from and by the code.

Collection reads a 200-key recipe tree and lint parses a 400 KB changelog, validates that tree,
diffs it against the base and scans every script, on every run, although their inputs rarely
change between two runs. Each value is stored under its name with a key naming its inputs
(content digests, file sizes, the base commit) and with the signature of
the pytest-infx modules that computed it, so a new pytest-infx never reads an old value. Values
live in pytest's cache folder, so ``--cache-clear`` and ``-p no:cacheprovider`` give a cold run;
a lost or broken file only means the value is computed again, so writes skip the fsync.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from pytest_infx.files.atomic import atomic_write_bytes
from pytest_infx.files.textio import read_input

T = TypeVar("T")
_PACKAGE = Path(__file__).resolve().parent.parent
"""The whole pytest_infx package: a stored value is as old as any of its modules."""


def files_under(root: Path, suffixes: tuple[str, ...] = (".py",)) -> list[str]:
    """Files under ``root`` with one of ``suffixes``, in a stable order."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        found.extend(
            os.path.join(folder, name) for name in sorted(files) if name.endswith(suffixes)
        )
    return found


def content_digest(path: str | os.PathLike[str]) -> int | None:
    """A cheap digest of a file's bytes (``None`` when it cannot be read, or is not a regular
    file: a pipe would block the run and a device never end).

    Size and modification time alone miss an edit that keeps both (checkouts with fixed
    modification times, ``touch -d``), so every stored value is keyed by content as well.
    """
    try:
        data = read_input(os.fspath(path))
    except OSError:
        return None
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def stat_signature(paths: Iterable[str], salt: str = "") -> str:
    """A digest of each path's size and content (a missing file counts too)."""
    h = hashlib.sha256(salt.encode())
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            h.update(f"{path}\0missing\n".encode())
            continue
        h.update(f"{path}\0{st.st_size}\0{content_digest(path)}\n".encode())
    return h.hexdigest()


@functools.cache
def package_signature() -> str:
    """Changes whenever any module of pytest-infx does, so no stored value outlives its code."""
    return stat_signature(files_under(_PACKAGE))


def digest(*parts: bytes | str | None) -> str:
    """A key from contents: ``None`` and ``b""`` differ (no file vs. an empty one)."""
    h = hashlib.sha256()
    for part in parts:
        if part is None:
            h.update(b"\x00none\x00")
        else:
            data = part.encode() if isinstance(part, str) else part
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    return h.hexdigest()


class PickleCache:
    """One pickle per value name in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}.pickle"

    def load(self, name: str) -> tuple[str, Any] | None:
        """The key and value stored under ``name`` by this pytest-infx, if any."""
        try:
            code, key, value = pickle.loads(self._path(name).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            return None
        return (key, value) if code == package_signature() else None

    def save(self, name: str, key: str, value: Any) -> None:
        data = pickle.dumps((package_signature(), key, value), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            atomic_write_bytes(self._path(name), data, durable=False)
        except OSError:
            pass

    def get(self, name: str, key: str, compute: Callable[[], T]) -> T:
        stored = self.load(name)
        if stored is not None and stored[0] == key:
            return cast(T, stored[1])
        computed = compute()
        self.save(name, key, computed)
        return computed

    def per_file(
        self, name: str, paths: Sequence[Path], compute: Callable[[Path], T]
    ) -> dict[Path, T]:
        """``compute(path)`` for each path, reusing stored results of files whose size and
        content are unchanged; a file that cannot be read (``OSError``) is left out."""
        stored = self.load(name)
        previous: dict[Path, tuple[tuple[int, int], T]] = stored[1] if stored is not None else {}
        current: dict[Path, tuple[tuple[int, int], T]] = {}
        for path in paths:
            try:
                st = os.stat(path)
                content = content_digest(path)
                if content is None:
                    continue
                stamp = (st.st_size, content)
                hit = previous.get(path)
                current[path] = (
                    hit if hit is not None and hit[0] == stamp else (stamp, compute(path))
                )
            except OSError:
                continue
        if current.keys() != previous.keys() or any(
            previous[p] is not entry for p, entry in current.items()
        ):
            self.save(name, "", current)
        return {path: value for path, (_, value) in current.items()}

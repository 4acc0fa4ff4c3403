"""Lint's derived inputs, kept between runs and keyed by what they were computed from.

``pytest -m lint`` runs before every PR and again after each fix, over a changelog that only
grows and a recipe tree of which a PR touches a few files. Parsing the changelog, validating the
tree, diffing it against the base and scanning every script cost more than all the rules, yet
their inputs rarely change between two runs. Each value is stored under its name with a key
naming its inputs (content digests, file sizes and modification times, the base commit) and the
pytest-infx code that computed it; a different key recomputes it. Values live in pytest's cache
folder, so ``--cache-clear`` and ``-p no:cacheprovider`` give a cold run.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from pytest_infx.atomic import atomic_write_bytes
from pytest_infx.recipes.cache import package_signature

T = TypeVar("T")


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


class Store:
    """One pickle per value name in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}.pickle"

    def load(self, name: str, key: str) -> tuple[bool, Any]:
        """``(True, value)`` when ``name`` was stored under ``key`` by this pytest-infx."""
        try:
            stored_key, value = pickle.loads(self._path(name).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            return False, None
        if stored_key != (key, package_signature()):
            return False, None
        return True, value

    def save(self, name: str, key: str, value: Any) -> None:
        data = pickle.dumps(((key, package_signature()), value), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            atomic_write_bytes(self._path(name), data, durable=False)
        except OSError:
            pass

    def get(self, name: str, key: str, compute: Callable[[], T]) -> T:
        found, value = self.load(name, key)
        if found:
            return cast(T, value)
        computed = compute()
        self.save(name, key, computed)
        return computed

    def per_file(
        self, name: str, paths: Sequence[Path], compute: Callable[[Path], T]
    ) -> dict[Path, T]:
        """``compute(path)`` for each path, reusing stored results of files whose size and
        modification time are unchanged; a file that cannot be read (``OSError``) is left out."""
        found, stored = self.load(name, "per-file")
        previous: dict[Path, tuple[tuple[int, int], T]] = stored if found else {}
        current: dict[Path, tuple[tuple[int, int], T]] = {}
        for path in paths:
            try:
                st = os.stat(path)
                stamp = (st.st_size, st.st_mtime_ns)
                hit = previous.get(path)
                current[path] = (
                    hit if hit is not None and hit[0] == stamp else (stamp, compute(path))
                )
            except OSError:
                continue
        if current.keys() != previous.keys() or any(
            previous[p] is not entry for p, entry in current.items()
        ):
            self.save(name, "per-file", current)
        return {path: value for path, (_, value) in current.items()}

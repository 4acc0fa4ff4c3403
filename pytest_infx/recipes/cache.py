"""Values derived from the recipe tree, kept between runs while no file they came from changed.

Parsing and validating a 200-key tree is most of what ``--collect-only`` costs, and the same
unchanged tree is collected again on every run and by every xdist worker. The values are kept
in a :class:`~pytest_infx.files.store.PickleCache` in pytest's cache folder, keyed by the path,
size and content digest of every file under the recipe folder (an edit that keeps a file's size
and modification time is still an edit). Only a value without errors is stored: an error must
be reported from a fresh read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pytest_infx.files.store import PickleCache, files_under, stat_signature
from pytest_infx.recipes.layout import RECIPE_SUFFIXES
from pytest_infx.settings import environment

if TYPE_CHECKING:
    from pytest_infx.recipes.loader import Tree

DISABLE_VAR = "INFX_RECIPE_CACHE"
T = TypeVar("T")


def signature(root: Path) -> str:
    return stat_signature(files_under(root, RECIPE_SUFFIXES), str(root.resolve()))


def cached(
    root: Path,
    folder: Path | None,
    name: str,
    kind: type[T],
    build: Callable[[T | None], T],
    clean: Callable[[T], bool],
) -> T:
    """``build(stale)``, or its stored value from ``folder`` (pytest's cache) when nothing
    changed; ``stale`` is the value stored for an older state of the files by this same
    pytest-infx, for builds that can reuse its unchanged parts.

    ``clean`` says whether a value may be stored: values that carry errors never are.
    """
    if folder is None or environment().recipe_cache == "0" or not root.is_dir():
        return build(None)
    store = PickleCache(folder)
    entry = f"{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]}-{name}"
    key = signature(root)
    stored = store.load(entry)
    stale: T | None = None
    if stored is not None and isinstance(stored[1], kind):
        if stored[0] == key:
            return stored[1]
        stale = stored[1]
    value = build(stale)
    if clean(value):
        store.save(entry, key, value)
    return value


def cached_tree(
    root: Path, folder: Path | None, read: Callable[[Path], Tree] | None = None
) -> Tree:
    """The parsed tree under ``root``; after an edit only the changed files are parsed again."""
    from pytest_infx.recipes.loader import Tree, read_tree

    def build(stale: Tree | None) -> Tree:
        return read(root) if read is not None else read_tree(root, stale)

    return cached(root, folder, "tree", Tree, build, lambda t: not t.errors)

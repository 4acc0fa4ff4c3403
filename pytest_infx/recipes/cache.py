"""Values derived from the recipe tree, kept between runs while no file they came from changed.

Parsing and validating a 200-key tree is most of what ``--collect-only`` costs, and the same
unchanged tree is collected again on every run and by every xdist worker. The values live in
pytest's cache folder (``.pytest_cache``, cleared by ``--cache-clear``), keyed like a ``.pyc`` by
the path, size and modification time of every file under the recipe folder and of every module
of pytest-infx, so any edit (or a new pytest-infx) misses them. Only a value without errors is
cached: an error must be reported from a fresh read.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pytest_infx.atomic import atomic_write_bytes
from pytest_infx.recipes.layout import RECIPE_SUFFIXES

if TYPE_CHECKING:
    from pytest_infx.recipes.loader import Tree

DISABLE_VAR = "INFX_RECIPE_CACHE"
_PACKAGE = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def _files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        found.extend(
            os.path.join(folder, name) for name in sorted(files) if name.endswith(suffixes)
        )
    return found


def stat_signature(paths: Iterable[str], salt: str = "") -> str:
    """A digest of each path's size and modification time (a missing file counts too)."""
    digest = hashlib.sha256(salt.encode())
    for path in paths:
        try:
            st = os.stat(path)
            digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{path}\0missing\n".encode())
    return digest.hexdigest()


@functools.cache
def package_signature() -> str:
    """Changes whenever any module of pytest-infx does, so no stored value outlives its code."""
    return stat_signature(_files(_PACKAGE, (".py",)))


def signature(root: Path) -> str:
    return stat_signature(_files(root, RECIPE_SUFFIXES), f"{root.resolve()}\0{package_signature()}")


def cache_path(root: Path, folder: Path, name: str = "tree") -> Path:
    stem = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return folder / f"{stem}-{name}.pickle"


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
    if folder is None or os.environ.get(DISABLE_VAR) == "0" or not root.is_dir():
        return build(None)
    code = package_signature()
    key = signature(root)
    path = cache_path(root, folder, name)
    stale: T | None = None
    try:
        stored_code, stored_key, value = pickle.loads(path.read_bytes())
        if stored_code == code and isinstance(value, kind):
            if stored_key == key:
                return value
            stale = value
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        pass
    value = build(stale)
    if clean(value):
        try:
            data = pickle.dumps((code, key, value), protocol=pickle.HIGHEST_PROTOCOL)
            atomic_write_bytes(path, data, durable=False)
        except OSError:
            pass
    return value


def cached_tree(
    root: Path, folder: Path | None, read: Callable[[Path], Tree] | None = None
) -> Tree:
    """The parsed tree under ``root``; after an edit only the changed files are parsed again."""
    from pytest_infx.recipes.loader import Tree, read_tree

    def build(stale: Tree | None) -> Tree:
        return read(root) if read is not None else read_tree(root, stale)

    return cached(root, folder, "tree", Tree, build, lambda t: not t.errors)

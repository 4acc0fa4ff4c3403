"""A parsed recipe tree, kept between runs while no file it was read from has changed.

Parsing and validating a 200-key tree is most of what ``--collect-only`` costs, and the same
unchanged tree is collected again on every run and by every xdist worker. It lives in pytest's
cache folder (``.pytest_cache``, cleared by ``--cache-clear``), keyed like a ``.pyc`` by the path,
size and modification time of every file under the recipe folder and of the modules that define
the format, so any edit (or a new pytest-infx) misses it. Only a tree without errors is cached: an
error must be reported from a fresh read.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path

from pytest_infx.atomic import atomic_write_bytes
from pytest_infx.recipes import loader, points, schema, source
from pytest_infx.recipes.loader import RECIPE_SUFFIXES, Tree

DISABLE_VAR = "INFX_RECIPE_CACHE"


def signature(root: Path) -> str:
    digest = hashlib.sha256(str(root.resolve()).encode())
    stats = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(RECIPE_SUFFIXES):
                stats.append(os.path.join(folder, name))
    for module in (loader, points, schema, source):
        stats.append(str(module.__file__))
    for path in stats:
        st = os.stat(path)
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cache_path(root: Path, folder: Path) -> Path:
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return folder / f"{name}.pickle"


def cached_tree(
    root: Path, folder: Path | None, read: Callable[[Path], Tree] = loader.read_tree
) -> Tree:
    """The tree under ``root``, from ``folder`` (pytest's cache, per project) when unchanged."""
    if folder is None or os.environ.get(DISABLE_VAR) == "0" or not root.is_dir():
        return read(root)
    key = signature(root)
    path = cache_path(root, folder)
    try:
        stored_key, tree = pickle.loads(path.read_bytes())
        if stored_key == key and isinstance(tree, Tree):
            return tree
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        pass
    tree = read(root)
    if not tree.errors:
        try:
            atomic_write_bytes(path, pickle.dumps((key, tree), protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass
    return tree

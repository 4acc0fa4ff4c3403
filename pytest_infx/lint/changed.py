"""The recipe keys changed since a base ref, loading only the recipes whose files changed.

``recipes.changes.changed_since`` fingerprints every point of both trees; on an InferenceX-sized
repository that costs more than every other lint rule together. A point's fingerprint depends only
on its recipe file and the files that file ``extends``, so a recipe whose file and bases have the
base's bytes cannot have changed. Git names the files that differ; only the recipes that touch
them are loaded, on both sides, and compared with the same fingerprints ``infx changed`` uses.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from pytest_infx.files.git import GitError, changed_paths, objects
from pytest_infx.files.textio import read_input
from pytest_infx.recipes.changes import compare, fingerprints
from pytest_infx.recipes.errors import RecipeError, RecipeErrors
from pytest_infx.recipes.layout import RECIPE_SUFFIXES
from pytest_infx.recipes.loader import RecipeSource, Tree, load_file, recipe_files


class Context(Protocol):
    """What :func:`changed_since_base` reads of a lint context (kept structural so the
    context can default to this module without the two importing each other)."""

    @property
    def root(self) -> Path: ...
    @property
    def base_ref(self) -> str | None: ...
    @property
    def recipes_dir(self) -> Path | None: ...
    def tree(self) -> Tree | None: ...


_EXTENDS = re.compile(r"""^extends:[ \t]*["']?([^"'#\n]*?)["']?[ \t]*(?:#.*)?$""", re.MULTILINE)


def _chain(path: Path, cache: dict[Path, Path | None]) -> list[Path]:
    """``path`` and the files it extends, read from the text (no YAML parse)."""
    chain: list[Path] = []
    current: Path | None = path
    while current is not None and current not in chain:
        chain.append(current)
        if current not in cache:
            try:
                match = _EXTENDS.search(read_input(current).decode("utf-8", "replace"))
            except (OSError, UnicodeDecodeError):
                match = None
            cache[current] = (current.parent / match.group(1)).resolve() if match else None
        current = cache[current]
    return chain


def affected(files: Iterable[Path], changed: set[Path]) -> list[Path]:
    """The recipe files that are, or extend, a changed file."""
    cache: dict[Path, Path | None] = {}
    return [path for path in files if any(p in changed for p in _chain(path.resolve(), cache))]


def _affected_files(head: Tree, recipes: Path, changed: set[Path]) -> list[Path]:
    """``affected`` for the head tree's files, using the bases each source was read with
    (its stamps) instead of reading every file's text again."""
    chains: dict[Path, list[Path]] = {}
    for source in head.sources:
        stamp = head.stamps.get(source.path)
        if stamp is not None:
            chains[source.path.resolve()] = [Path(p).resolve() for p, _, _ in stamp]
    files = [path.resolve() for path in recipe_files(recipes)]
    unknown = set(affected([p for p in files if p not in chains], changed))
    return [
        path for path in files if path in unknown or any(p in changed for p in chains.get(path, ()))
    ]


def _base_blobs(root: Path, base: str, rels: list[str]) -> dict[str, bytes]:
    """The bytes of ``rels`` at ``base`` (paths missing there are left out), in one git call."""
    if not rels:
        return {}
    found = objects(root, [f"{base}:{rel}" for rel in rels])
    return {
        rel: blob.body
        for rel, blob in zip(rels, found, strict=True)
        if blob is not None and blob.kind == "blob"
    }


class _BaseTree:
    """The base's version of the files recipes need, written on demand under ``scratch``: a
    changed file from git, any other file from the working tree (its bytes are the base's)."""

    def __init__(self, top: Path, scratch: Path, blobs: dict[str, bytes], changed: set[Path]):
        self.top = top
        self.scratch = scratch
        self.blobs = blobs
        self.changed = changed

    def write(self, path: Path) -> Path | None:
        """Write ``path`` (a working-tree path) and its extends chain; return the copy."""
        target: Path | None = None
        current: Path | None = path
        seen: set[Path] = set()
        while current is not None and current not in seen and current.is_relative_to(self.top):
            seen.add(current)
            rel = current.relative_to(self.top).as_posix()
            if current in self.changed:
                data = self.blobs.get(rel)
            else:
                try:
                    data = read_input(current)
                except OSError:
                    data = None
            if data is None:
                break
            copy = self.scratch / rel
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)
            target = target or copy
            match = _EXTENDS.search(data.decode("utf-8", "replace"))
            current = (current.parent / match.group(1)).resolve() if match else None
        return target


def _load(paths: Iterable[Path]) -> Tree:
    sources: list[RecipeSource] = []
    for path in paths:
        try:
            sources.append(load_file(path))
        except (RecipeError, RecipeErrors):
            continue
    return Tree(tuple(sources), {})


def changed_keys(root: Path, recipes: Path, base: str, head: Tree) -> frozenset[str]:
    """Added or modified recipe keys since ``base`` (a removed key needs no changelog entry).

    An unchanged recipe file reaches a changed file through the same extends lines at the base
    as in the working tree, so the recipes to compare are the same on both sides: the affected
    working-tree files, plus changed recipe files that exist only at the base."""
    top, changed = changed_paths(root, base)
    recipes = recipes.resolve()
    head_files = _affected_files(head, recipes, changed)
    touched = set(head_files)
    after = fingerprints(Tree(tuple(s for s in head.sources if s.path.resolve() in touched), {}))
    in_recipes = sorted(
        path
        for path in changed
        if path.is_relative_to(recipes)
        and path.suffix in RECIPE_SUFFIXES
        and not any(part.startswith(("_", ".")) for part in path.relative_to(recipes).parts)
    )
    if not head_files and not in_recipes:
        return frozenset()
    wanted = sorted({*head_files, *in_recipes})
    rels = sorted(p.relative_to(top).as_posix() for p in changed if p.is_relative_to(top))
    blobs = _base_blobs(root, base, rels)
    with tempfile.TemporaryDirectory(prefix="infx-lint-base-") as tmp:
        tree = _BaseTree(top, Path(tmp).resolve(), blobs, changed)
        copies = [copy for path in wanted if (copy := tree.write(path)) is not None]
        before = fingerprints(_load(copies))
    return frozenset(c.key for c in compare(before, after) if c.status != "removed")


def changed_since_base(ctx: Context) -> frozenset[str] | None:
    """The context's changed keys: ``None`` (coverage skipped) without a base, a recipe folder
    or git, and when the recipes do not load (a broken file may hold any key)."""
    tree = ctx.tree()
    if ctx.base_ref is None or ctx.recipes_dir is None or tree is None or tree.errors:
        return None
    try:
        return changed_keys(ctx.root, ctx.recipes_dir, ctx.base_ref, tree)
    except (GitError, OSError):
        return None

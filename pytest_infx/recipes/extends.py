"""``extends:``: a recipe file built on a base file (a file whose name starts with ``_``), merged
on the raw, line-tracked mappings so that an error still names the file and line the author
wrote; a chain that loops, leaves the recipe folder or names a broken base is an error there."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.recipes.errors import Location, RecipeError, RecipeErrors
from pytest_infx.recipes.source import LinedDict, load_yaml


def deep_merge(base: LinedDict, over: LinedDict) -> LinedDict:
    """Merge ``over`` into a copy of ``base``; mappings merge, everything else is replaced."""
    out = LinedDict(base.location)
    for key, value in base.items():
        out[key] = value
        out.key_locations[key] = base.where(key)
    for key, value in over.items():
        current = out.get(key)
        if isinstance(current, LinedDict) and isinstance(value, LinedDict):
            out[key] = deep_merge(current, value)
        else:
            out[key] = value
        out.key_locations[key] = over.where(key)
    return out


def _read_mapping(path: Path) -> LinedDict:
    data = load_yaml(path)
    if not isinstance(data, LinedDict):
        raise RecipeError(
            Location(path, 1),
            None,
            "a recipe file must hold one mapping",
            "start the file with 'key: <recipe key>'",
        )
    return data


@dataclass(frozen=True)
class BrokenBase:
    """A base file that failed to load, and the first recipe whose load reported it."""

    reported_with: Path


MAX_EXTENDS = 32
"""The longest extends chain followed: far beyond any real recipe's, and short enough that
resolving it never nears Python's recursion limit."""

Bases = dict[Path, tuple[LinedDict, tuple[Path, ...]] | BrokenBase]
"""Resolved base files by resolved path, with the bases each extends in turn (or the note that
one is broken); shared by the files of one tree and never mutated."""


def _shown(paths: Iterable[Path], start: Path) -> str:
    """``a.yaml -> _base/b.yaml -> a.yaml``, relative to the first file's folder."""
    return " -> ".join(os.path.relpath(p, start) for p in paths)


def resolve_extends(
    path: Path,
    seen: tuple[Path, ...] = (),
    bases: Bases | None = None,
    chain: list[Path] | None = None,
) -> LinedDict:
    """``seen`` holds the files that extend ``path``, outermost first; ``chain`` collects the
    base files ``path`` extends, nearest first."""
    raw = _read_mapping(path)
    parent = raw.pop("extends", None)
    if parent is None:
        return raw
    location = raw.where("extends")
    if not isinstance(parent, str):
        raise RecipeError(
            location,
            "extends",
            "must be a path to a base file",
            "write e.g. 'extends: _base/mimo-b200.yaml'",
        )
    parent_path = (path.parent / parent).resolve()
    here = (*seen, path.resolve())
    if len(here) >= MAX_EXTENDS:
        raise RecipeError(
            location,
            "extends",
            f"the extends chain is more than {MAX_EXTENDS} files long",
            "a recipe builds on a few base files; merge the bases into fewer",
        )
    if parent_path in here:
        raise RecipeError(
            location,
            "extends",
            f"circular extends: {_shown((*here, parent_path), here[0].parent)}",
            "a base file must not extend, directly or through other bases, a file that extends it",
        )
    if not parent_path.is_file():
        raise RecipeError(
            location,
            "extends",
            f"base file {parent} does not exist",
            "paths are relative to the recipe file",
        )
    resolved = bases.get(parent_path) if bases is not None else None
    if isinstance(resolved, BrokenBase):
        raise RecipeError(
            location,
            "extends",
            f"base file {parent} has errors, reported once with {resolved.reported_with}",
            "fix the base file; this recipe loads once it does",
        )
    if resolved is None:
        parents: list[Path] = []
        try:
            base = resolve_extends(parent_path, here, bases, parents)
        except (RecipeError, RecipeErrors):
            if bases is not None:
                bases[parent_path] = BrokenBase(here[0])
            raise
        resolved = (base, tuple(parents))
        if bases is not None:
            bases[parent_path] = resolved
    if chain is not None:
        chain.extend((parent_path, *resolved[1]))
    return deep_merge(resolved[0], raw)

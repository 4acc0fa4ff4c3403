"""Load a tree of recipe files into validated recipes.

A recipe file may ``extends:`` a base file (files whose name starts with ``_`` are bases, never
recipes themselves) and may carry ``overrides:`` blocks that apply to the points they match. Both
are merged on the raw, line-tracked mappings so that any error still names the file and line the
author wrote. Errors from all files are collected and raised together.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_infx.files.contained import within
from pytest_infx.files.store import content_digest
from pytest_infx.recipes.checks import embedded_models, quoted_booleans, recipe_errors
from pytest_infx.recipes.errors import Location, RecipeError, RecipeErrors
from pytest_infx.recipes.extends import Bases, resolve_extends
from pytest_infx.recipes.layout import is_recipe
from pytest_infx.recipes.owned import EngineRules
from pytest_infx.recipes.schema import POINT_FIELDS, Recipe
from pytest_infx.recipes.source import LinedDict, LinedList, read_text
from pytest_infx.recipes.validation import validation_errors


@dataclass(frozen=True)
class Override:
    """Fields to merge into every point whose coordinates match ``when``."""

    index: int
    when: dict[str, tuple[Any, ...]]
    fields: LinedDict
    location: Location


@dataclass(frozen=True)
class RecipeSource:
    """A validated recipe with what is needed to expand it into points."""

    recipe: Recipe
    raw: LinedDict
    overrides: tuple[Override, ...]
    path: Path
    location: Location


def recipe_files(root: Path) -> list[Path]:
    """Recipe files under ``root``, sorted, so every xdist worker sees the same order."""
    if root.is_file():
        return [root]
    files = [p for p in root.rglob("*") if is_recipe(p.relative_to(root)) and not p.is_dir()]
    return sorted(files)


COORDINATE_HINTS = {
    "kind": "write the kind of the points to change, e.g. 'kind: agentic'",
    "tp": "write a positive integer or a list of them, e.g. 'tp: [4, 8]'",
    "concurrency": "write a positive integer or a list of them, e.g. 'concurrency: [32, 64]'",
    "draft-length": "write a positive integer or a list of them, e.g. 'draft-length: [7, 8]'",
    "thinking": "write thinking_on or thinking_off",
    "variant": "write the name of an agentic.points variant, e.g. 'variant: hicache'",
    "isl": "write a positive integer or a list of them, e.g. 'isl: [1024, 8192]'",
    "osl": "write a positive integer or a list of them, e.g. 'osl: [1024]'",
}


def valid_coordinate(name: str, value: Any) -> bool:
    """A typo in ``when`` would silently match no point, so values are checked like fields."""
    if name == "thinking":
        return value in ("thinking_on", "thinking_off", "on", "off") or isinstance(value, bool)
    if name == "kind":
        # a kind another package provides is known only to the run; a name no point of the
        # recipe has is refused once the points are made, with the kinds they have
        return isinstance(value, str) and value.isidentifier()
    if name == "variant":
        return isinstance(value, str) and bool(value)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _parse_overrides(raw: LinedDict) -> tuple[Override, ...]:
    block = raw.pop("overrides", None)
    if block is None:
        return ()
    if not isinstance(block, LinedList):
        raise RecipeError(
            raw.where("overrides"),
            "overrides",
            "must be a list of override blocks",
            "write '- when: {tp: 8}' followed by the fields to change",
        )
    result = []
    for index, entry in enumerate(block):
        where = block.where(index)
        if not isinstance(entry, LinedDict) or "when" not in entry:
            raise RecipeError(
                where,
                f"overrides[{index}]",
                "an override needs a 'when:' mapping",
                f"match on any of: {', '.join(POINT_FIELDS)}",
            )
        when_raw = entry["when"]
        if not isinstance(when_raw, LinedDict) or not when_raw:
            raise RecipeError(
                entry.where("when"),
                f"overrides[{index}].when",
                "must be a non-empty mapping",
                f"match on any of: {', '.join(POINT_FIELDS)}",
            )
        when: dict[str, tuple[Any, ...]] = {}
        for name, value in when_raw.items():
            if name not in POINT_FIELDS:
                raise RecipeError(
                    when_raw.where(name),
                    f"overrides[{index}].when.{name}",
                    "unknown point coordinate",
                    f"match on any of: {', '.join(POINT_FIELDS)}",
                )
            values = tuple(value) if isinstance(value, list) else (value,)
            bad = [v for v in values if not valid_coordinate(name, v)]
            if bad or not values:
                raise RecipeError(
                    when_raw.where(name),
                    f"overrides[{index}].when.{name}",
                    f"cannot match {bad[0]!r}" if bad else "empty list matches no point",
                    COORDINATE_HINTS[name],
                )
            when[name] = values
        fields = LinedDict(entry.location)
        for name, value in entry.items():
            if name == "when":
                continue
            if name in ("key", "extends", "overrides"):
                raise RecipeError(
                    entry.where(name),
                    f"overrides[{index}].{name}",
                    "cannot be overridden per point",
                )
            fields[name] = value
            fields.key_locations[name] = entry.where(name)
        result.append(Override(index, when, fields, where))
    return tuple(result)


def load_file(
    path: Path,
    *,
    bases: Bases | None = None,
    chain: list[Path] | None = None,
    rules: EngineRules | None = None,
) -> RecipeSource:
    """One recipe file, validated; ``bases`` lets the files of one tree parse a base once,
    ``chain`` collects the base files it extends, and ``rules`` are the engines' (see
    :func:`recipe_errors`)."""
    raw = resolve_extends(path, (), bases, chain)
    overrides = _parse_overrides(raw)
    try:
        recipe = Recipe.model_validate(raw)
    except ValidationError as exc:
        raise RecipeErrors(validation_errors(raw, exc)) from None
    errors = [
        *recipe_errors(raw, recipe, rules),
        *quoted_booleans(raw, recipe),
        *embedded_models(raw, recipe),
    ]
    if errors:
        raise RecipeErrors(errors)
    return RecipeSource(recipe, raw, overrides, path, raw.location)


def _flatten(errors: Iterable[Exception]) -> Iterator[RecipeError]:
    for exc in errors:
        if isinstance(exc, RecipeErrors):
            yield from exc.errors
        elif isinstance(exc, RecipeError):
            yield exc


Stamp = tuple[tuple[str, int, int], ...]


def _stamp(paths: Iterable[str | Path]) -> Stamp | None:
    """Per file its path, size and content digest; ``None`` when one cannot be read."""
    out = []
    for p in paths:
        content = content_digest(p)
        if content is None:
            return None
        out.append((str(p), os.stat(p).st_size, content))
    return tuple(out)


@dataclass(frozen=True)
class Tree:
    """The recipes of a folder, and the errors of each file that failed to load.

    ``stamps`` holds, per loaded file, the size and content digest of the file and of every
    base it extends, so that a later read can reuse each source whose files are unchanged.
    """

    sources: tuple[RecipeSource, ...]
    errors: dict[Path, tuple[RecipeError, ...]]
    stamps: dict[Path, Stamp] = field(default_factory=dict, compare=False, repr=False)

    def unchanged(self) -> dict[Path, tuple[RecipeSource, Stamp]]:
        """The sources whose file and bases all still have the size and content they were read
        with, by path."""
        found: dict[Path, tuple[RecipeSource, Stamp]] = {}
        for source in self.sources:
            stamp = self.stamps.get(source.path)
            if stamp is not None and _stamp(p for p, _, _ in stamp) == stamp:
                found[source.path] = (source, stamp)
        return found


def read_tree(root: Path, previous: Tree | None = None, rules: EngineRules | None = None) -> Tree:
    """Load every recipe under ``root``, keeping each file's errors with that file.

    Collection reports a bad file as that file's error and still collects the others. With a
    ``previous`` read, a file whose content (and bases) did not change is not parsed again.
    """
    sources: list[RecipeSource] = []
    errors: dict[Path, list[RecipeError]] = {}
    stamps: dict[Path, Stamp] = {}
    bases: Bases = {}
    reusable = previous.unchanged() if previous is not None else {}
    inside = root.resolve() if root.is_dir() else root.resolve().parent
    for path in recipe_files(root):
        reused = reusable.get(path)
        if reused is not None:
            sources.append(reused[0])
            stamps[path] = reused[1]
            continue
        chain: list[Path] = []
        before = _stamp([path])
        try:
            sources.append(load_file(path, bases=bases, chain=chain, rules=rules))
        except (RecipeError, RecipeErrors) as exc:
            errors.setdefault(path, []).extend(_flatten([exc]))
            continue
        outside = next((p for p in chain if not within(inside, p)), None)
        if outside is not None:
            sources.pop()
            errors.setdefault(path, []).append(
                RecipeError(
                    _extends_location(path),
                    "extends",
                    f"base file {outside} is outside the recipe folder {root}",
                    "keep base files under the recipe folder (e.g. _base/), so that the folder"
                    " holds every file its recipes are made of",
                )
            )
            continue
        stamp = _stamp([path, *chain])
        if stamp is not None and before is not None and stamp[0] == before[0]:
            stamps[path] = stamp
    seen: dict[str, RecipeSource] = {}
    kept: list[RecipeSource] = []
    for source in sources:
        first = seen.get(source.recipe.key)
        if first is not None:
            errors.setdefault(source.path, []).append(
                RecipeError(
                    source.raw.where("key"),
                    "key",
                    f"duplicate recipe key '{source.recipe.key}'"
                    f" (also in {first.raw.where('key')})",
                    "recipe keys must be unique; rename one of them",
                )
            )
        else:
            seen[source.recipe.key] = source
            kept.append(source)
    return Tree(tuple(kept), _once_per_base(errors), stamps)


def _extends_location(path: Path) -> Location:
    """The ``extends:`` line of a recipe file (read again only when a base has errors)."""
    try:
        lines = read_text(path).splitlines()
    except RecipeError:
        return Location(path, 1)
    line = next((n for n, text in enumerate(lines, 1) if text.startswith("extends:")), 1)
    return Location(path, line)


def _once_per_base(errors: dict[Path, list[RecipeError]]) -> dict[Path, tuple[RecipeError, ...]]:
    """Each error written in a base file, reported with the first recipe that extends it; the
    other recipes name that recipe instead of repeating it (a broken base extended by twelve
    recipes is one error, not twelve)."""
    first: dict[str, Path] = {}
    out: dict[Path, tuple[RecipeError, ...]] = {}
    for path, errs in errors.items():
        kept: list[RecipeError] = []
        bases: dict[Path, Path] = {}
        for error in errs:
            where = error.location.path if error.location is not None else path
            if where == path or error.problem.startswith("missing required field"):
                kept.append(error)
                continue
            reported = first.setdefault(str(error), path)
            if reported == path:
                kept.append(error)
            else:
                bases.setdefault(where, reported)
        for base, reported in bases.items():
            shown = os.path.relpath(base, path.parent)
            kept.append(
                RecipeError(
                    _extends_location(path),
                    "extends",
                    f"base file {shown} has errors, reported once with {reported}",
                    "fix the base file; this recipe loads once it does",
                )
            )
        out[path] = tuple(kept)
    return out


def checked_tree(root: Path, rules: EngineRules | None = None) -> Tree:
    """The tree under ``root`` when every file loads; all errors of all files are raised
    together."""
    tree = read_tree(root, rules=rules)
    if tree.errors:
        raise RecipeErrors([e for errs in tree.errors.values() for e in errs])
    return tree


def load_tree(root: Path, rules: EngineRules | None = None) -> list[RecipeSource]:
    """Every recipe under ``root``; all errors of all files are raised together."""
    return list(checked_tree(root, rules).sources)

"""Load a tree of recipe files into validated recipes.

A recipe file may ``extends:`` a base file (files whose name starts with ``_`` are bases, never
recipes themselves) and may carry ``overrides:`` blocks that apply to the points they match. Both
are merged on the raw, line-tracked mappings so that any error still names the file and line the
author wrote. Errors from all files are collected and raised together.
"""

from __future__ import annotations

import difflib
import os
import types
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_infx.files.store import content_digest
from pytest_infx.recipes.errors import Location, RecipeError, RecipeErrors
from pytest_infx.recipes.layout import is_recipe
from pytest_infx.recipes.owned import EngineRules, canonical, owner, spellings
from pytest_infx.recipes.schema import EMBEDDED_PREFIX, POINT_FIELDS, Recipe
from pytest_infx.recipes.source import LinedDict, LinedList, load_yaml, read_text


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
    files = [
        p
        for p in root.rglob("*")
        if is_recipe(p.relative_to(root)) and (p.is_file() or _dangling(p))
    ]
    return sorted(files)


def _dangling(path: Path) -> bool:
    """A symbolic link to nothing: listed, so that it is an error and not a silent skip."""
    return path.is_symlink() and not path.exists()


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


Bases = dict[Path, tuple[LinedDict, tuple[Path, ...]] | BrokenBase]
"""Resolved base files by resolved path, with the bases each extends in turn (or the note that
one is broken); shared by the files of one tree and never mutated."""


def _shown(paths: Iterable[Path], start: Path) -> str:
    """``a.yaml -> _base/b.yaml -> a.yaml``, relative to the first file's folder."""
    return " -> ".join(os.path.relpath(p, start) for p in paths)


def _resolve_extends(
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
            base = _resolve_extends(parent_path, here, bases, parents)
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


def _annotation_model(annotation: Any) -> type[BaseModel] | None:
    """The model class inside an annotation such as ``Foo | None`` or ``tuple[Foo, ...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, tuple, list):
        for arg in typing.get_args(annotation):
            found = _annotation_model(arg)
            if found is not None:
                return found
    return None


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Recipe
    for part in loc:
        if model is None:
            return None
        if isinstance(part, int):
            continue
        field = next(
            (f for name, f in model.model_fields.items() if f.alias == part or name == part), None
        )
        if field is None:
            return None
        model = _annotation_model(field.annotation)
    return model


def _allowed(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def _walk(raw: LinedDict, loc: tuple[int | str, ...]) -> tuple[Location, Any]:
    """Where the deepest written part of ``loc`` is, and the value at ``loc`` (``None`` when
    it is not all written)."""
    node: Any = raw
    location = raw.location
    for part in loc:
        if isinstance(node, LinedDict) and isinstance(part, str) and part in node:
            location = node.where(part)
            node = node[part]
        elif isinstance(node, LinedList) and isinstance(part, int):
            location = node.where(part)
            node = node[part] if part < len(node) else None
        else:
            return location, None
    return location, node


def _locate(raw: LinedDict, loc: tuple[int | str, ...]) -> Location:
    return _walk(raw, loc)[0]


def _field_name(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif parts:
            parts.append(f".{part}")
        else:
            parts.append(part)
    return "".join(parts) or "<recipe>"


_BOUND_HINTS = {
    "greater_than_equal": "use a value of at least {ge}",
    "greater_than": "use a value greater than {gt}",
    "less_than_equal": "use a value of at most {le}",
    "too_short": "give at least {min_length} item(s)",
}


def _hint(err: Any) -> str:
    template = _BOUND_HINTS.get(err["type"])
    if template is not None:
        try:
            return template.format(**err.get("ctx", {}))
        except (KeyError, IndexError):
            pass
    return "see the recipe format in the README"


def validation_errors(raw: LinedDict, exc: ValidationError) -> list[RecipeError]:
    """Turn pydantic errors into RecipeErrors that point at the YAML line."""
    out: list[RecipeError] = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        kind = err["type"]
        field = _field_name(loc)
        location = _locate(raw, loc)
        if kind == "extra_forbidden":
            allowed = _allowed(_model_at(loc[:-1]))
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            out.append(
                RecipeError(
                    location, field, "unknown field", f"{hint}allowed here: {', '.join(allowed)}"
                )
            )
        elif kind == "missing":
            allowed = _allowed(_model_at(loc[:-1]))
            out.append(
                RecipeError(
                    location,
                    field,
                    "missing required field",
                    f"add '{loc[-1]}:' (fields here: {', '.join(allowed)})",
                )
            )
        else:
            given = err.get("input")
            shown = repr(given) if not isinstance(given, dict | list) else type(given).__name__
            out.append(RecipeError(location, field, f"{err['msg']} (got {shown})", _hint(err)))
    return out


_COORDINATE_HINTS = {
    "kind": "write speedbench or agentic",
    "tp": "write a positive integer or a list of them, e.g. 'tp: [4, 8]'",
    "concurrency": "write a positive integer or a list of them, e.g. 'concurrency: [32, 64]'",
    "draft-length": "write a positive integer or a list of them, e.g. 'draft-length: [7, 8]'",
    "thinking": "write thinking_on or thinking_off",
    "variant": "write the name of an agentic.points variant, e.g. 'variant: hicache'",
}


def _valid_coordinate(name: str, value: Any) -> bool:
    """A typo in ``when`` would silently match no point, so values are checked like fields."""
    if name == "thinking":
        return value in ("thinking_on", "thinking_off", "on", "off") or isinstance(value, bool)
    if name == "kind":
        return value in ("speedbench", "agentic")
    if name == "variant":
        return isinstance(value, str) and bool(value)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _repeats(
    raw: LinedDict, items: list[int], fields: tuple[str | int, ...], what: str
) -> Iterator[RecipeError]:
    """An error at each item of ``items`` (written at ``fields`` in ``raw``) that repeats an
    earlier one: one benchmark cell per value, so a repeat is a mistake, never a merge."""
    written, node = _walk(raw, fields)
    first: dict[int, int] = {}
    for index, value in enumerate(items):
        if value not in first:
            first[value] = index
            continue
        where = node.where(index) if isinstance(node, LinedList) else written
        earlier = node.where(first[value]).line if isinstance(node, LinedList) else None
        also = f" (first at line {earlier})" if earlier is not None else ""
        yield RecipeError(
            where,
            _field_name((*fields, index)),
            f"{what} {value} is listed twice{also}",
            "list each value once",
        )


def recipe_errors(
    raw: LinedDict, recipe: Recipe, rules: EngineRules | None = None
) -> list[RecipeError]:
    """What the schema cannot say alone: repeated draft lengths or concurrencies, and engine
    args that set a flag the plugin sets itself. Cheap; run for every effective recipe.

    The engine's name and its owned flags are checked against ``rules``, the adapters' answers;
    without them only what holds for every engine is.
    """
    out: list[RecipeError] = []
    if rules is not None:
        out.extend(engine_name_errors(raw, recipe, rules))
    if recipe.speedbench is not None:
        out.extend(
            _repeats(
                raw,
                recipe.speedbench.draft_lengths,
                ("speedbench", "draft-lengths"),
                "draft length",
            )
        )
    if recipe.agentic is not None:
        by_arm: dict[tuple[int, str | None], int] = {}
        for index, point in enumerate(recipe.agentic.points):
            fields: tuple[str | int, ...] = ("agentic", "points", index, "concurrency")
            out.extend(_repeats(raw, point.concurrency, fields, "concurrency"))
            earlier = by_arm.setdefault((point.tp, point.variant), index)
            if earlier != index:
                arm = f" variant {point.variant!r}" if point.variant else ""
                out.append(
                    RecipeError(
                        _locate(raw, ("agentic", "points", index, "tp")),
                        f"agentic.points[{index}].tp",
                        f"TP {point.tp}{arm} is listed again (first in agentic.points[{earlier}])",
                        "give each TP (and variant) one entry with all its concurrencies,"
                        " or name the arms apart with 'variant:'",
                    )
                )
    agentic = recipe.agentic is not None
    tables = rules.tables(recipe.engine.name, agentic=agentic) if rules is not None else ()
    repeated = {name for names in spellings(recipe.engine.args).values() for name in names[1:]}
    for name in recipe.engine.args:
        setter = owner(name, tables)
        if name in repeated and setter is None:
            first = next(n for n in recipe.engine.args if canonical(n) == canonical(name))
            out.append(
                RecipeError(
                    _locate(raw, ("engine", "args", name)),
                    f"engine.args.{name}",
                    f"names the flag --{canonical(name)} again (first as '{first}'); the"
                    " server would get it twice and keep whichever came last",
                    "keep one spelling with the value you mean",
                )
            )
            continue
        if setter is None:
            if name != name.strip():
                out.append(
                    RecipeError(
                        _locate(raw, ("engine", "args", name)),
                        f"engine.args.{name}",
                        "the flag name has surrounding spaces, which the engine's parser does"
                        " not strip",
                        f"write '{name.strip()}:'",
                    )
                )
                continue
            if name.startswith("-"):
                out.append(
                    RecipeError(
                        _locate(raw, ("engine", "args", name)),
                        f"engine.args.{name}",
                        "flag names are written without leading dashes",
                        f"write '{name.lstrip('-')}:'",
                    )
                )
            continue
        if name in repeated:
            continue
        named = f"--{canonical(name)}"
        out.append(
            RecipeError(
                _locate(raw, ("engine", "args", name)),
                f"engine.args.{name}",
                f"pytest-infx sets this flag itself ({named} as the engine's parser reads it),"
                f" from {setter}; a second value would give the {recipe.engine.name} server two"
                " conflicting flags",
                f"remove it from engine.args and set {setter} instead",
            )
        )
    return out


def engine_name_errors(raw: LinedDict, recipe: Recipe, rules: EngineRules) -> list[RecipeError]:
    """An engine no adapter (nor forced-acceptance setting) answers for, with the closest
    names; the names come from the adapters, so one a package provides is accepted."""
    out = []
    given = (
        ("name", recipe.engine.name, rules.engines),
        ("embedded", recipe.engine.embedded, rules.embedded),
    )
    for key, name, known in given:
        if name is None or not known or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        guess = f" did you mean {close[0]!r}?" if close else ""
        what = "engine" if key == "name" else "embedded engine"
        out.append(
            RecipeError(
                _locate(raw, ("engine", key)),
                f"engine.{key}",
                f"no {what} {name!r};{guess} {what}s: {', '.join(known)}",
                f"name one of those {what}s"
                + (", or install the package that provides its adapter" if key == "name" else ""),
            )
        )
    return out


_QUOTED_BOOLEANS = ("true", "false")


def quoted_booleans(raw: LinedDict, recipe: Recipe) -> Iterator[RecipeError]:
    """A boolean written as a string where the engine expects a boolean: as a flag value the
    server gets ``--flag false``, which its parser rejects or reads as true, and in the
    speculative settings (JSON) ``"false"`` is a non-empty string. (The thinking-mode kwargs
    have their own check, per model family.) A dotted engine arg (``attention_config.x: "True"``)
    is left alone: vLLM's parser builds that JSON field from the text and its config reads
    ``True`` as a boolean, and InferenceX's scripts write it so."""
    fields: list[tuple[tuple[str | int, ...], dict[str, Any]]] = [
        (("engine", "args"), dict(recipe.engine.args))
    ]
    if recipe.speedbench is not None:
        bench = recipe.speedbench
        fields.append((("speedbench", "speculative", "settings"), dict(bench.speculative.settings)))
    if recipe.agentic is not None and recipe.agentic.speculative is not None:
        settings = dict(recipe.agentic.speculative.settings)
        fields.append((("agentic", "speculative", "settings"), settings))
    for where, values in fields:
        for name, value in values.items():
            if where == ("engine", "args") and "." in name:
                continue
            if isinstance(value, str) and value.strip().lower() in _QUOTED_BOOLEANS:
                bare = value.strip().lower()
                hint = (
                    "write true for a bare flag, or leave the flag out"
                    if where == ("engine", "args")
                    else f"write {bare} without quotes (a JSON boolean)"
                )
                yield RecipeError(
                    _locate(raw, (*where, name)),
                    _field_name((*where, name)),
                    f"the string {value!r} where a boolean is meant",
                    hint,
                )


EMBEDDED_MODELS = ("embedded:target", "embedded:draft")
"""The models the embedded CPU engine ships; another ``embedded:`` name would be looked up on
the hub, a download of a model that does not exist."""


def embedded_models(raw: LinedDict, recipe: Recipe) -> Iterator[RecipeError]:
    named: list[tuple[tuple[str | int, ...], str | None]] = [(("model", "path"), recipe.model.path)]
    if recipe.speedbench is not None:
        named.append((("speedbench", "speculative", "draft"), recipe.speedbench.speculative.draft))
    if recipe.agentic is not None and recipe.agentic.speculative is not None:
        named.append((("agentic", "speculative", "draft"), recipe.agentic.speculative.draft))
    for where, name in named:
        if name is None or not name.startswith(EMBEDDED_PREFIX):
            continue
        problem = None
        if name not in EMBEDDED_MODELS:
            shipped = ", ".join(EMBEDDED_MODELS)
            problem = f"no embedded model {name!r}; the embedded engine ships {shipped}"
        elif recipe.engine.embedded is None:
            problem = f"{name} is a model of the embedded engine, and this recipe's engine is not"
        if problem is not None:
            yield RecipeError(
                _locate(raw, where),
                _field_name(where),
                problem,
                "name an embedded model with 'engine.embedded' set to the embedded engine"
                " (`infx engine status` names it), or a hub id or path",
            )


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
            bad = [v for v in values if not _valid_coordinate(name, v)]
            if bad or not values:
                raise RecipeError(
                    when_raw.where(name),
                    f"overrides[{index}].when.{name}",
                    f"cannot match {bad[0]!r}" if bad else "empty list matches no point",
                    _COORDINATE_HINTS[name],
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
    raw = _resolve_extends(path, (), bases, chain)
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
        outside = next((p for p in chain if not p.is_relative_to(inside)), None)
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

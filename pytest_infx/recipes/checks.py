"""What a recipe can get wrong that its schema cannot see: repeated or impossible point
coordinates, flags the engine owns, engine names no adapter answers for, booleans written as
strings, embedded models used without the embedded engine."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from pytest_infx.recipes.errors import RecipeError
from pytest_infx.recipes.owned import EngineRules, canonical, owner, spellings
from pytest_infx.recipes.schema import EMBEDDED_PREFIX, Recipe
from pytest_infx.recipes.source import LinedDict, LinedList
from pytest_infx.recipes.validation import field_name, locate, walk


def _repeats(
    raw: LinedDict, items: list[int], fields: tuple[str | int, ...], what: str
) -> Iterator[RecipeError]:
    """An error at each item of ``items`` (written at ``fields`` in ``raw``) that repeats an
    earlier one: one benchmark cell per value, so a repeat is a mistake, never a merge."""
    written, node = walk(raw, fields)
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
            field_name((*fields, index)),
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
        out.extend(method_case_errors(raw, recipe, rules))
    out.extend(output_len_errors(raw, recipe))
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
                        locate(raw, ("agentic", "points", index, "tp")),
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
                    locate(raw, ("engine", "args", name)),
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
                        locate(raw, ("engine", "args", name)),
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
                        locate(raw, ("engine", "args", name)),
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
                locate(raw, ("engine", "args", name)),
                f"engine.args.{name}",
                f"pytest-infx sets this flag itself ({named} as the engine's parser reads it),"
                f" from {setter}; a second value would give the {recipe.engine.name} server two"
                " conflicting flags",
                f"remove it from engine.args and set {setter} instead",
            )
        )
    return out


def method_case_errors(raw: LinedDict, recipe: Recipe, rules: EngineRules) -> list[RecipeError]:
    """A speculative method in another case than the engine takes it: vLLM reads ``NGRAM`` as
    no method it has, and the server would not start."""
    engine = recipe.engine.name
    if engine not in rules.lowercase_methods:
        return []
    found = []
    for kind, block in (("speedbench", recipe.speedbench), ("agentic", recipe.agentic)):
        spec = getattr(block, "speculative", None)
        if spec is not None and spec.method != spec.method.lower():
            found.append(
                RecipeError(
                    locate(raw, (kind, "speculative", "method")),
                    f"{kind}.speculative.method",
                    f"{engine} takes its speculative methods in lower case; it has no method"
                    f" {spec.method!r}",
                    f"write '{spec.method.lower()}'",
                )
            )
    return found


def output_len_errors(raw: LinedDict, recipe: Recipe) -> list[RecipeError]:
    """An output length the model's context cannot hold even with an empty prompt: every
    request of the cell would be refused."""
    bench, limit = recipe.speedbench, recipe.model.max_model_len
    if bench is None or limit is None or bench.output_len < limit:
        return []
    return [
        RecipeError(
            locate(raw, ("speedbench", "output-len")),
            "speedbench.output-len",
            f"{bench.output_len} tokens do not fit the model's max-model-len {limit} with any"
            " prompt",
            f"give an output length well under {limit}, or raise model.max-model-len",
        )
    ]


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
                locate(raw, ("engine", key)),
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
                    locate(raw, (*where, name)),
                    field_name((*where, name)),
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
                locate(raw, where),
                field_name(where),
                problem,
                "name an embedded model with 'engine.embedded' set to the embedded engine"
                " (`infx engine status` names it), or a hub id or path",
            )

"""pydantic's validation errors as recipe errors: each at the file and line of the value it is
about, with the field's name as the author wrote it and a hint (the allowed keys, the bound)."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_infx.recipes.errors import Location, RecipeError
from pytest_infx.recipes.schema import Recipe
from pytest_infx.recipes.source import LinedDict, LinedList


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


def walk(raw: LinedDict, loc: tuple[int | str, ...]) -> tuple[Location, Any]:
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


def locate(raw: LinedDict, loc: tuple[int | str, ...]) -> Location:
    return walk(raw, loc)[0]


def field_name(loc: tuple[int | str, ...]) -> str:
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
    return "see the recipe format in docs/recipes.md"


def validation_errors(raw: LinedDict, exc: ValidationError) -> list[RecipeError]:
    """Turn pydantic errors into RecipeErrors that point at the YAML line."""
    out: list[RecipeError] = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        kind = err["type"]
        field = field_name(loc)
        location = locate(raw, loc)
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
            if isinstance(given, dict):
                shown = "a mapping"
            elif isinstance(given, list):
                shown = repr(list(given)) if len(repr(list(given))) <= 60 else "a list"
            else:
                shown = repr(given)
            message = str(err["msg"]).removeprefix("Value error, ")
            out.append(RecipeError(location, field, f"{message} (got {shown})", _hint(err)))
    return out

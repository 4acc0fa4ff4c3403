"""YAML with line numbers.

PyYAML's C composer gives nodes with marks; we build plain dicts that remember where each key was
written, so that an error found after merging base blocks and overrides can still point at the
file and line the author must edit. Duplicate keys, which PyYAML silently accepts, are errors.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from pytest_infx.files.textio import InputFileError, NotUtf8Error, decode_utf8, read_input
from pytest_infx.files.yamlkeys import repeated_key
from pytest_infx.files.yamlnodes import ScalarFault, YamlFault, compose, scalar
from pytest_infx.recipes.errors import Location, RecipeError


class LinedDict(dict[str, Any]):
    """A mapping that knows where it and each of its keys were written."""

    __slots__ = ("key_locations", "location")

    def __init__(self, location: Location):
        super().__init__()
        self.location = location
        self.key_locations: dict[str, Location] = {}

    def where(self, key: str) -> Location:
        return self.key_locations.get(key, self.location)


class LinedList(list[Any]):
    __slots__ = ("item_locations", "location")

    def __init__(self, location: Location):
        super().__init__()
        self.location = location
        self.item_locations: list[Location] = []

    def where(self, index: int) -> Location:
        if 0 <= index < len(self.item_locations):
            return self.item_locations[index]
        return self.location


MERGE_TAG = "tag:yaml.org,2002:merge"


def _scalar(node: yaml.ScalarNode, path: Path) -> Any:
    try:
        return scalar(node)
    except ScalarFault as fault:
        where = Location(path, node.start_mark.line + 1)
        if fault.unknown_tag:
            raise RecipeError(
                where,
                None,
                fault.problem,
                "remove the tag; recipes use plain strings, numbers, lists and mappings",
            ) from None
        raise RecipeError(
            where,
            None,
            f"invalid value {node.value!r}: {fault.problem}",
            "quote the value to keep it a string",
        ) from None


MAX_DEPTH = 64
"""Nesting deeper than this is an error: a recipe nests a few levels, and a deeper document
would only exhaust the interpreter's stack (``RecursionError``) somewhere later."""
MAX_VALUES = 50_000
"""Values a document may expand to: aliases of aliases (billion laughs) make a small file that
expands to more values than memory or time allows."""


class _Budget:
    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values = 0


def _convert(
    node: yaml.Node, path: Path, open_nodes: set[int], depth: int = 0, budget: _Budget | None = None
) -> Any:
    """``open_nodes`` holds the collections being converted, to catch a recursive alias."""
    if budget is None:
        budget = _Budget()
    budget.values += 1
    if budget.values > MAX_VALUES:
        raise RecipeError(
            Location(path, node.start_mark.line + 1),
            None,
            f"the YAML expands to more than {MAX_VALUES:,} values (aliases of aliases?)",
            "write the values out instead of nesting aliases",
        )
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node, path)
    location = Location(path, node.start_mark.line + 1)
    if depth >= MAX_DEPTH:
        raise RecipeError(
            location,
            None,
            f"nested more than {MAX_DEPTH} levels deep",
            "flatten the value; recipes nest a few levels",
        )
    if id(node) in open_nodes:
        raise RecipeError(
            location, None, "recursive YAML alias", "write the value out instead of an alias"
        )
    open_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        repeat = repeated_key(node)
        if repeat is not None:
            first, again = repeat
            raise RecipeError(
                Location(path, again.start_mark.line + 1),
                str(again.value),
                f"duplicate key (first written at line {first.start_mark.line + 1})",
                "remove one of the two",
            )
        out = LinedDict(location)
        for key_node, value_node in node.value:
            key_location = Location(path, key_node.start_mark.line + 1)
            if key_node.tag == MERGE_TAG:
                raise RecipeError(
                    key_location,
                    "<<",
                    "YAML merge keys are not supported",
                    "use 'extends:' or an 'overrides:' block instead",
                )
            key = _convert(key_node, path, open_nodes, depth + 1, budget)
            if not isinstance(key, str):
                raise RecipeError(key_location, str(key), "keys must be strings", "quote the key")
            out[key] = _convert(value_node, path, open_nodes, depth + 1, budget)
            out.key_locations[key] = key_location
        open_nodes.discard(id(node))
        return out
    items = LinedList(location)
    for child in node.value:
        items.append(_convert(child, path, open_nodes, depth + 1, budget))
        items.item_locations.append(Location(path, child.start_mark.line + 1))
    open_nodes.discard(id(node))
    return items


def read_text(path: Path) -> str:
    """The text of a recipe or base file, or a RecipeError naming the file (and the line and
    column of a byte that is not UTF-8)."""
    try:
        data = read_input(path)
    except FileNotFoundError as exc:
        if not path.is_symlink():
            raise RecipeError(
                Location(path, 1), None, f"cannot read file: {exc.strerror}"
            ) from None
        raise RecipeError(
            Location(path, 1),
            None,
            f"a symbolic link to {os.readlink(path)}, which does not exist",
            "point the link at a recipe file or remove it",
        ) from None
    except InputFileError as exc:
        raise RecipeError(Location(path, 1), None, exc.strerror or str(exc)) from None
    except OSError as exc:
        raise RecipeError(Location(path, 1), None, f"cannot read file: {exc.strerror}") from None
    try:
        return decode_utf8(path, data)
    except NotUtf8Error as exc:
        raise RecipeError(
            Location(path, exc.line, exc.column),
            None,
            f"not valid UTF-8 (byte 0x{exc.byte:02x})",
            "save the file as UTF-8",
        ) from None


def load_yaml(path: Path, text: str | None = None) -> Any:
    """Parse one YAML document into LinedDict/LinedList values, or raise a RecipeError."""
    if text is None:
        text = read_text(path)
    try:
        node = compose(text)
    except YamlFault as fault:
        where = Location(path, fault.line or 1, fault.column)
        if fault.too_deep:
            raise RecipeError(where, None, fault.problem, "flatten the file") from None
        if fault.tab:
            raise RecipeError(
                where,
                None,
                f"a tab at column {fault.column}: YAML indents with spaces only",
                "replace the tab with spaces",
            ) from None
        raise RecipeError(
            where, None, f"invalid YAML: {fault.problem}", "fix the syntax at that line"
        ) from None
    if node is None:
        return None
    return _convert(node, path, set())

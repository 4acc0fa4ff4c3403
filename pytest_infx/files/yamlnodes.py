"""Every YAML text pytest-infx reads (recipes, golden curves, the changelog, master configs) is
composed here, the same way: into nodes only, so no tag can build a Python object, one document,
with libyaml when it is installed; and the faults are told alike: a syntax error at its line and
column, a tab where YAML wants spaces, a document nested deeper than the parser can follow.

Each reader then walks the nodes for its own format and words the fault for its own users; what
counts as a repeated key is :mod:`pytest_infx.files.yamlkeys`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import yaml
from yaml.nodes import Node, ScalarNode

LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlFault(Exception):
    """Why a text is not one YAML document; ``line`` and ``column`` count from 1 and are None
    where the parser gave no place. ``context`` is where the construct that failed began, as
    PyYAML says it (``while parsing a block mapping``), with its line."""

    problem: str
    line: int | None = None
    column: int | None = None
    tab: bool = False
    too_deep: bool = False
    context: str | None = None
    context_line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.problem}"


STR_TAG = "tag:yaml.org,2002:str"
_SAFE = yaml.constructor.SafeConstructor()


class ScalarFault(ValueError):
    """A scalar no safe loader would make: a tag it does not know (``!!python/object``), or a
    value its tag cannot hold (``!!int x``)."""

    def __init__(self, problem: str, *, unknown_tag: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.unknown_tag = unknown_tag


def scalar(node: ScalarNode) -> object:
    """One scalar's value as a safe loader makes it, without the constructor's per-node cache
    (which never empties), so reading many files keeps no node alive."""
    if node.tag == STR_TAG:
        return node.value
    construct = _SAFE.yaml_constructors.get(node.tag)
    if construct is None:
        raise ScalarFault(f"unsupported YAML tag {node.tag}", unknown_tag=True)
    try:
        value: object = construct(_SAFE, node)
    except (yaml.YAMLError, ValueError) as exc:
        raise ScalarFault(getattr(exc, "problem", None) or str(exc)) from None
    return value


MAX_DEPTH = 10_000
"""Far deeper than any file of ours (libyaml itself stops at 1,000 where it has a limit), and
far below what crashes the libyaml builds that have none (those of PyYAML before 6.0.4 recurse
without a limit and crash the process on a document nested 100,000 levels deep), so the text is
measured before it is parsed."""
_OPEN = str.maketrans({"[": "\x01", "{": "\x01", "]": "\x02", "}": "\x02"})


def nesting(text: str) -> int:
    """An upper bound of how deep ``text`` nests: its deepest run of open brackets plus its
    deepest indentation (a block level takes at least one more space)."""
    indent = max((len(m) for m in _INDENT.findall(text)), default=0)
    opens = text.count("[") + text.count("{")
    if opens + indent <= MAX_DEPTH:
        return opens + indent
    marks = _NOT_BRACKET.sub("", text).translate(_OPEN)
    flow = max(accumulate(1 if mark == "\x01" else -1 for mark in marks), default=0)
    return flow + indent


_INDENT = re.compile(r"^ +", re.MULTILINE)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def compose(text: str) -> Node | None:
    """The node of the one document in ``text``; None for an empty text; else YamlFault."""
    if nesting(text) > MAX_DEPTH:
        raise YamlFault(TOO_DEEP, too_deep=True)
    loader = LOADER(text)
    try:
        node: Node | None = loader.get_single_node()
        return node
    except RecursionError:
        raise YamlFault(TOO_DEEP, too_deep=True) from None
    except yaml.MarkedYAMLError as exc:
        raise _marked(text, exc) from None
    except yaml.reader.ReaderError as exc:
        raise _unreadable(text, exc) from None
    except yaml.YAMLError as exc:
        raise YamlFault(str(exc)) from None
    finally:
        loader.dispose()


TOO_DEEP = "the YAML nests too deep to read"
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
"""libyaml's own limit (1000 levels), met before Python's recursion limit."""


def _marked(text: str, exc: yaml.MarkedYAMLError) -> YamlFault:
    mark = exc.problem_mark or exc.context_mark
    context = exc.context if exc.context and exc.context_mark is not None else None
    if exc.problem == _LIBYAML_TOO_DEEP:
        return YamlFault(TOO_DEEP, line=mark.line + 1 if mark else None, too_deep=True)
    return YamlFault(
        problem=exc.problem or str(exc),
        line=mark.line + 1 if mark is not None else None,
        column=mark.column + 1 if mark is not None else None,
        tab=mark is not None and _tab(text, mark),
        context=context,
        context_line=exc.context_mark.line + 1 if context and exc.context_mark else None,
    )


def _unreadable(text: str, exc: yaml.reader.ReaderError) -> YamlFault:
    """A character YAML does not allow (NUL, ESC, other control characters), at its line."""
    at = min(max(int(exc.position), 0), len(text))
    line_start = text.rfind("\n", 0, at) + 1
    character = exc.character if isinstance(exc.character, str) else chr(int(exc.character))
    return YamlFault(
        f"the character U+{ord(character):04X} is not allowed in YAML ({exc.reason})",
        line=text.count("\n", 0, at) + 1,
        column=at - line_start + 1,
    )


def _tab(text: str, mark: yaml.Mark) -> bool:
    """Whether the parser stopped at a tab ("cannot start any token", "violates indentation")."""
    lines = text.splitlines()
    return mark.line < len(lines) and lines[mark.line][mark.column : mark.column + 1] == "\t"

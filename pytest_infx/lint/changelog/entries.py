"""Changelog entries: the strict schema every entry of ``perf-changelog.yaml`` must match.

Parsing composes nodes only (:mod:`pytest_infx.files.yamlnodes`, libyaml when it is installed),
and node marks give the line numbers, so a 772-entry file is checked in a few tens of
milliseconds and every problem of every entry is reported with its line, not only the first.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

import yaml

from pytest_infx.files.yamlkeys import repeated_key
from pytest_infx.files.yamlnodes import YamlFault, compose
from pytest_infx.lint.context import SCENARIO_TYPES
from pytest_infx.lint.findings import Finding, quote_numbered

PLACEHOLDER = "XXX"
REQUIRED_FIELDS: tuple[str, ...] = ("config-keys", "description", "pr-link")
OPTIONAL_FIELDS: tuple[str, ...] = (
    "evals-only",
    "all-evals",
    "append-only",
    "eval-min-prefill-ep",
    "scenario-type",
)
FIELDS: tuple[str, ...] = REQUIRED_FIELDS + OPTIONAL_FIELDS
_EVAL_FIELDS: tuple[str, ...] = ("evals-only", "all-evals", "eval-min-prefill-ep")
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_CONFLICT = re.compile(r"^(?:<{7}|\|{7}|={7}|>{7})(?=[ \r\n]|\Z)", re.MULTILINE)
CONFLICT_MESSAGE = "unresolved Git conflict"


def missing_field(name: str) -> str:
    return f"missing required field '{name}'."


@dataclass(frozen=True)
class ChangelogEntry:
    """One validated entry. ``index`` is its 0-based position, ``line`` the line of its
    ``- config-keys:``; ``key_lines`` and ``pr_link_line`` locate fields for messages."""

    index: int
    line: int
    config_keys: tuple[str, ...]
    description: tuple[str, ...]
    pr_link: str
    key_lines: tuple[int, ...]
    pr_link_line: int
    evals_only: bool = False
    all_evals: bool = False
    append_only: bool = False
    eval_min_prefill_ep: int | None = None
    scenario_type: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedChangelog:
    """``entries`` is aligned with the YAML list (``None`` for an entry that failed the schema);
    ``item_lines`` holds each item's first line. Both are empty when the YAML itself is broken."""

    entries: tuple[ChangelogEntry | None, ...]
    item_lines: tuple[int, ...]
    findings: tuple[Finding, ...]
    yaml_ok: bool
    conflicted: bool = False

    def valid(self) -> Iterator[ChangelogEntry]:
        return (entry for entry in self.entries if entry is not None)


class ChangelogFormatError(ValueError):
    """Raised by :func:`load_changelog` with every schema problem rendered."""


class _EntryBuilder:
    """Checks one entry's mapping node; collects problems instead of stopping at the first."""

    def __init__(
        self, index: int, node: yaml.MappingNode, path: str, scenario_types: tuple[str, ...]
    ) -> None:
        self.index = index
        self.node = node
        self.path = path
        self.scenario_types = scenario_types
        self.findings: list[Finding] = []

    def error(self, node: yaml.Node, message: str, hint: str) -> None:
        self.findings.append(
            Finding(
                "changelog-schema", self.path, node.start_mark.line + 1, self.index, message, hint
            )
        )

    def string_list(self, name: str, node: yaml.Node) -> tuple[tuple[str, ...], tuple[int, ...]]:
        what = "recipe keys" if name == "config-keys" else "strings"
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self.error(
                node,
                f"'{name}' must be a list of at least one item.",
                f"Write it as a block list of {what}, one '- item' per line.",
            )
            return (), ()
        values: list[str] = []
        lines: list[int] = []
        for item in node.value:
            if not isinstance(item, yaml.ScalarNode) or item.tag != _STR or not item.value.strip():
                shown = item.value if isinstance(item, yaml.ScalarNode) else type(item).__name__
                self.error(
                    item,
                    f"'{name}' item {shown!r} is not a non-empty string.",
                    "Quote it if YAML reads it as a number, a boolean or null.",
                )
                continue
            values.append(item.value)
            lines.append(item.start_mark.line + 1)
        return tuple(values), tuple(lines)

    def boolean(self, name: str, node: yaml.Node) -> bool:
        if isinstance(node, yaml.ScalarNode) and node.tag == _BOOL:
            return node.value.lower() in ("true", "yes", "on", "y")
        self.error(node, f"'{name}' must be true or false.", f"Remove '{name}' or set it to true.")
        return False

    def build(self) -> ChangelogEntry | None:
        repeat = repeated_key(self.node)
        if repeat is not None:
            first, again = repeat
            self.error(
                again,
                f"duplicate key '{again.value}' (first on line {first.start_mark.line + 1}).",
                "Keep one.",
            )
        fields: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in self.node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str) or key not in FIELDS:
                self._unknown(key_node, key)
            else:
                fields.setdefault(key, (key_node, value_node))
        for name in REQUIRED_FIELDS:
            if name not in fields:
                self.error(
                    self.node,
                    missing_field(name),
                    "Every entry has config-keys, description and pr-link.",
                )
        if any(name not in fields for name in REQUIRED_FIELDS):
            return None
        keys, key_lines = self.string_list("config-keys", fields["config-keys"][1])
        description, _ = self.string_list("description", fields["description"][1])
        link_node = fields["pr-link"][1]
        if isinstance(link_node, yaml.ScalarNode) and not link_node.value.strip():
            self.error(
                fields["pr-link"][0],
                "'pr-link' is empty.",
                f"Write '{PLACEHOLDER}' until the PR exists, then the PR URL.",
            )
        elif not (isinstance(link_node, yaml.ScalarNode) and link_node.tag == _STR):
            shown = link_node.value if isinstance(link_node, yaml.ScalarNode) else "a collection"
            self.error(
                link_node,
                f"'pr-link' must be a string, found {shown!r}.",
                f"Use '{PLACEHOLDER}' until the PR exists, or the PR URL.",
            )
        flags = {
            name: self.boolean(name, fields[name][1])
            for name in ("evals-only", "all-evals", "append-only")
            if name in fields
        }
        min_ep = self._min_prefill_ep(fields.get("eval-min-prefill-ep"))
        scenario: tuple[str, ...] = ()
        if "scenario-type" in fields:
            scenario, lines = self.string_list("scenario-type", fields["scenario-type"][1])
            for value, line in zip(scenario, lines, strict=True):
                if value not in self.scenario_types:
                    self.findings.append(
                        Finding(
                            "changelog-schema",
                            self.path,
                            line,
                            self.index,
                            f"scenario-type {value!r} is not one of"
                            f" {', '.join(self.scenario_types)}.",
                            "Use one of those (ini infx_scenario_types lists the accepted ones).",
                        )
                    )
        if flags.get("append-only"):
            clashing = [name for name in _EVAL_FIELDS if name in fields]
            if clashing:
                self.error(
                    fields["append-only"][0],
                    f"'append-only' cannot be combined with {', '.join(clashing)}.",
                    "An append-only entry runs no evals; split it into two entries.",
                )
        if self.findings:
            return None
        return ChangelogEntry(
            index=self.index,
            line=self.node.start_mark.line + 1,
            config_keys=keys,
            description=description,
            pr_link=str(link_node.value),
            key_lines=key_lines,
            pr_link_line=link_node.start_mark.line + 1,
            evals_only=flags.get("evals-only", False),
            all_evals=flags.get("all-evals", False),
            append_only=flags.get("append-only", False),
            eval_min_prefill_ep=min_ep,
            scenario_type=scenario,
        )

    def _min_prefill_ep(self, pair: tuple[yaml.Node, yaml.Node] | None) -> int | None:
        if pair is None:
            return None
        node = pair[1]
        if isinstance(node, yaml.ScalarNode) and node.tag == _INT:
            value = int(node.value.replace("_", ""), 0) if node.value.isascii() else 0
            if value >= 1:
                return value
        shown = node.value if isinstance(node, yaml.ScalarNode) else "a collection"
        self.error(node, f"'eval-min-prefill-ep' must be an integer >= 1, found {shown!r}.", "")
        return None

    def _unknown(self, key_node: yaml.Node, key: object) -> None:
        suggestion = ""
        if isinstance(key, str):
            close = difflib.get_close_matches(key.replace("_", "-").lower(), FIELDS, n=1)
            if close:
                suggestion = f"Did you mean '{close[0]}'? "
        self.error(
            key_node,
            f"unknown field {key!r}.",
            f"{suggestion}Fields are kebab-case: {', '.join(FIELDS)}.",
        )


def _yaml_error_finding(path: str, fault: YamlFault) -> Finding:
    context = f" ({fault.context} on line {fault.context_line})" if fault.context else ""
    return Finding(
        "changelog-schema",
        path,
        fault.line,
        None,
        f"not valid YAML: {fault.problem}{context}.",
        "Fix the YAML at that line; every entry is a '- config-keys:' list item.",
    )


def _conflict_finding(path: str, text: str, markers: list[tuple[int, str]]) -> Finding:
    """One finding for a merge left unresolved: at its first marker, quoting every marker line,
    so the YAML error and byte findings the markers would also cause are not reported."""
    lines = text.split("\n")
    first = markers[0][0]
    return Finding(
        "changelog-schema",
        path,
        first,
        None,
        f"{CONFLICT_MESSAGE}: {len(markers)} conflict marker line"
        f"{'s' if len(markers) != 1 else ''} ({', '.join(m for _, m in markers)}).",
        "Resolve the merge: keep the base's entries as they are, put the new entries after them"
        " separated by one blank line, and delete the marker lines.",
        quote_numbered([(line, lines[line - 1].rstrip("\r")) for line, _ in markers]),
    )


def parse_changelog(
    data: bytes,
    *,
    path: str = "perf-changelog.yaml",
    scenario_types: tuple[str, ...] = SCENARIO_TYPES,
) -> ParsedChangelog:
    """Parse and validate every entry; problems come back as ``changelog-schema`` findings."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return ParsedChangelog(
            (),
            (),
            (
                Finding(
                    "changelog-schema", path, line, None, "not valid UTF-8.", "Re-save as UTF-8."
                ),
            ),
            False,
        )
    markers = [
        (text.count("\n", 0, match.start()) + 1, match.group())
        for match in _CONFLICT.finditer(text)
    ]
    if markers:
        return ParsedChangelog((), (), (_conflict_finding(path, text, markers),), False, True)
    try:
        root = compose(text)
    except YamlFault as fault:
        return ParsedChangelog((), (), (_yaml_error_finding(path, fault),), False)
    if root is None:
        return ParsedChangelog((), (), (), True)
    if not isinstance(root, yaml.SequenceNode):
        return ParsedChangelog(
            (),
            (),
            (
                Finding(
                    "changelog-schema",
                    path,
                    root.start_mark.line + 1,
                    None,
                    "the changelog must be a YAML list of entries.",
                    "Start each entry with '- config-keys:' at column 0.",
                ),
            ),
            False,
        )
    entries: list[ChangelogEntry | None] = []
    findings: list[Finding] = []
    for index, item in enumerate(root.value):
        if not isinstance(item, yaml.MappingNode):
            findings.append(
                Finding(
                    "changelog-schema",
                    path,
                    item.start_mark.line + 1,
                    index,
                    "entry is not a mapping.",
                    "An entry has config-keys, description and pr-link fields.",
                )
            )
            entries.append(None)
            continue
        builder = _EntryBuilder(index, item, path, scenario_types)
        entries.append(builder.build())
        findings.extend(builder.findings)
    return ParsedChangelog(
        tuple(entries),
        tuple(item.start_mark.line + 1 for item in root.value),
        tuple(findings),
        True,
    )


def load_changelog(data: bytes, *, path: str = "perf-changelog.yaml") -> tuple[ChangelogEntry, ...]:
    """The entries of a changelog that must be valid; raises with every problem rendered."""
    parsed = parse_changelog(data, path=path)
    if parsed.findings:
        raise ChangelogFormatError("\n".join(found.render() for found in parsed.findings))
    return tuple(parsed.valid())

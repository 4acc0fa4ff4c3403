"""The performance changelog: strict entry schema, byte rules, append-only and coverage rules.

The file is a YAML list of entries, each starting with a ``- config-keys:`` line at column 0 and
separated by exactly one blank line. Because the file only grows, the rules that compare it with
the base work on bytes: the head must start with the base's bytes, entries are split at their
``- config-keys:`` lines, and only an old entry's ``pr-link`` may change (to a canonical PR URL,
never in the same change as new entries). Parsing uses libyaml through ``yaml.CSafeLoader`` and
node marks for line numbers, so a 772-entry file is checked in a few tens of milliseconds.
"""

from __future__ import annotations

import bisect
import difflib
import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import yaml

from pytest_infx.lint.context import SCENARIO_TYPES, LintContext
from pytest_infx.lint.findings import Finding, quote_lines, rule
from pytest_infx.lint.masters import master_files
from pytest_infx.store import digest

DEFAULT_PR_REPO = "SemiAnalysisAI/InferenceX"
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

_ENTRY_START = re.compile(rb"^- config-keys:", re.MULTILINE)
_BLANK_LINE = re.compile(rb"^[ \t]*\n", re.MULTILINE)
_FORBIDDEN = re.compile(rb"[\t\r\x00]")
_TRAILING_SPACE = re.compile(rb"\S([ \t]+)$", re.MULTILINE)
_TRAILING_BLANKS = re.compile(rb"(?:\n[ \t]*)*\n?\Z")
CRLF_MESSAGE = "uses CRLF line endings"
_FORBIDDEN_NAMES = {b"\t": "a tab", b"\r": "a carriage return", b"\x00": "a NUL byte"}
_PR_URL = re.compile(rb"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/\d+")
_PR_LINK_LINE = re.compile(rb"^  pr-link:(.*)$")
_WILDCARD = re.compile(r"[*?\[]")
_REPORT_CAP = 10

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"


# ---------------------------------------------------------------------------------------------
# Parsing


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping repeats a key; YAML loaders silently keep the last value, we refuse."""


def _check_unique_keys(node: yaml.MappingNode) -> None:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
        if key in seen:
            raise DuplicateKeyError(
                "while constructing a mapping",
                seen[key].start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen[key] = key_node


class StrictLoader(yaml.CSafeLoader):
    """libyaml loader that rejects duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        _check_unique_keys(node)
        return super().construct_mapping(node, deep=deep)


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
        fields: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in self.node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str) or key not in FIELDS:
                self._unknown(key_node, key)
            elif key in fields:
                self.error(
                    key_node,
                    f"duplicate key '{key}' (first on line {fields[key][0].start_mark.line + 1}).",
                    "Keep one.",
                )
            else:
                fields[key] = (key_node, value_node)
        for name in REQUIRED_FIELDS:
            if name not in fields:
                self.error(
                    self.node,
                    f"missing required field '{name}'.",
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


def _yaml_error_finding(path: str, exc: yaml.YAMLError) -> Finding:
    line: int | None = None
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        line = exc.problem_mark.line + 1
    problem = exc.problem if isinstance(exc, yaml.MarkedYAMLError) and exc.problem else str(exc)
    context = ""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.context_mark is not None and exc.context:
        context = f" ({exc.context} on line {exc.context_mark.line + 1})"
    return Finding(
        "changelog-schema",
        path,
        line,
        None,
        f"not valid YAML: {problem}{context}.",
        "Fix the YAML at that line; every entry is a '- config-keys:' list item.",
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
    loader = StrictLoader(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        return ParsedChangelog((), (), (_yaml_error_finding(path, exc),), False)
    finally:
        loader.dispose()
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


# ---------------------------------------------------------------------------------------------
# Byte-level helpers


class _Lines:
    """Offset -> 1-based line number, by bisection over newline offsets."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.newlines = [match.start() for match in re.finditer(rb"\n", data)]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1

    def column(self, offset: int) -> int:
        start = self.data.rfind(b"\n", 0, offset) + 1
        return len(self.data[start:offset].decode("utf-8", "replace")) + 1

    def text(self, line: int) -> str:
        start = 0 if line == 1 else self.newlines[line - 2] + 1
        end = self.newlines[line - 1] if line - 1 < len(self.newlines) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace")


def entry_offsets(data: bytes) -> list[int]:
    """Byte offsets of the ``- config-keys:`` lines that start entries."""
    return [match.start() for match in _ENTRY_START.finditer(data)]


def split_entries(data: bytes) -> tuple[bytes, list[bytes]]:
    """``(preamble, chunks)``: the bytes before the first entry, then one chunk per entry, each
    running up to the next entry (so it includes the blank separator line)."""
    offsets = entry_offsets(data)
    if not offsets:
        return data, []
    bounds = [*offsets, len(data)]
    return data[: offsets[0]], [data[bounds[i] : bounds[i + 1]] for i in range(len(offsets))]


def _blank_runs(data: bytes) -> list[list[tuple[int, int]]]:
    """Consecutive blank (empty or whitespace-only) lines, as runs of ``(begin, end)`` spans."""
    runs: list[list[tuple[int, int]]] = []
    for match in _BLANK_LINE.finditer(data):
        span = (match.start(), match.end())
        if runs and runs[-1][-1][1] == span[0]:
            runs[-1].append(span)
        else:
            runs.append([span])
    return runs


def _entry_at(offsets: list[int], offset: int) -> int | None:
    position = bisect.bisect_right(offsets, offset) - 1
    return position if position >= 0 else None


def byte_findings(
    data: bytes,
    parsed: ParsedChangelog,
    *,
    path: str,
    scope: Callable[[int], bool] | None = None,
    base_crlf: int = 0,
) -> list[Finding]:
    """The file-level byte rules, each a linear scan. With a ``scope`` (PR mode: which lines
    the change wrote) only findings on those lines count, and CRLF only when the change added
    some."""
    found: list[Finding] = []
    if not data:
        return found
    crlf = data.count(b"\r\n")
    if crlf and (scope is None or crlf > base_crlf):
        first = data.count(b"\n", 0, data.find(b"\r\n")) + 1
        found.append(
            Finding(
                "changelog-bytes",
                path,
                first,
                None,
                f"{CRLF_MESSAGE} ({crlf} line{'s' if crlf != 1 else ''}); convert to LF.",
                "Save the file with LF (Unix) line endings, e.g. 'dos2unix perf-changelog.yaml'.",
            )
        )
        # Every other rule reads the file as if it were converted, so one cause is one finding.
        data = data.replace(b"\r\n", b"\n")
    lines = _Lines(data)
    offsets = entry_offsets(data)
    starts = set(offsets)

    def wanted(offset: int) -> bool:
        return scope is None or scope(lines.line(offset))

    def add(offset: int, message: str, hint: str, *, quote: bool = True) -> None:
        if not wanted(offset):
            return
        line = lines.line(offset)
        excerpt = quote_lines([lines.text(line)], line) if quote else ()
        found.append(
            Finding(
                "changelog-bytes", path, line, _entry_at(offsets, offset), message, hint, excerpt
            )
        )

    counts: Counter[bytes] = Counter()
    for match in _FORBIDDEN.finditer(data):
        if not wanted(match.start()):
            continue
        char = match.group()
        counts[char] += 1
        if counts[char] <= _REPORT_CAP:
            column = lines.column(match.start())
            add(
                match.start(),
                f"{_FORBIDDEN_NAMES[char]} at column {column}.",
                "Use spaces and LF line endings only.",
            )
    for char, total in counts.items():
        if total > _REPORT_CAP:
            found.append(
                Finding(
                    "changelog-bytes",
                    path,
                    None,
                    None,
                    f"{total - _REPORT_CAP} more occurrences of {_FORBIDDEN_NAMES[char]}.",
                    "",
                )
            )

    if not data.endswith(b"\n"):
        add(len(data) - 1, "the file does not end with a newline.", "Add one final newline.")
    trailing = 0
    for match in _TRAILING_SPACE.finditer(data):
        if not wanted(match.start(1)):
            continue
        trailing += 1
        if trailing <= _REPORT_CAP:
            add(
                match.start(1),
                f"trailing whitespace after the text at column {lines.column(match.start(1))}.",
                "Remove the spaces at the end of the line.",
            )
    if trailing > _REPORT_CAP:
        found.append(
            Finding(
                "changelog-bytes",
                path,
                None,
                None,
                f"{trailing - _REPORT_CAP} more lines with trailing whitespace.",
                "",
            )
        )
    for run in _blank_runs(data):
        begin, end = run[0][0], run[-1][1]
        spaces = [b for b, e in run if data[b:e] != b"\n"]
        many = f"{len(run)} blank lines" if len(run) > 1 else "a blank line"
        # One finding per run: a misplaced run that also holds spaces is still one cause.
        aside = " (holding only whitespace)" if spaces else ""
        if begin == 0:
            add(
                begin,
                f"the file starts with {many}{aside}.",
                "Start with the first entry.",
                quote=False,
            )
        elif end == len(data):
            add(
                begin,
                f"the file ends with {many}{aside} after its final newline.",
                "End the file with exactly one newline after the last entry.",
                quote=False,
            )
        elif end not in starts:
            add(
                begin,
                f"{many}{aside} inside an entry.",
                "Entries have no blank lines inside; exactly one blank line goes before each"
                " '- config-keys:'.",
                quote=False,
            )
        elif len(run) > 1:
            add(
                begin,
                f"{many}{aside} between entries.",
                "Separate entries by exactly one blank line.",
                quote=False,
            )
        elif spaces:
            add(spaces[0], "line holds only whitespace.", "Make it empty or remove it.")
    for offset in offsets[1:]:
        above = data[data.rfind(b"\n", 0, offset - 1) + 1 : offset]
        if above != b"\n" and above.strip(b" \t\n"):
            add(
                offset,
                "entry is not separated from the previous entry by a blank line.",
                "Put exactly one blank line before each '- config-keys:'.",
            )
    if parsed.yaml_ok and len(parsed.item_lines) != len(offsets):
        start_lines = {lines.line(offset) for offset in offsets}
        odd = [
            (i, line)
            for i, line in enumerate(parsed.item_lines)
            if line not in start_lines and (scope is None or scope(line))
        ]
        if scope is not None and not odd:
            return found
        for index, line in odd[:_REPORT_CAP]:
            found.append(
                Finding(
                    "changelog-bytes",
                    path,
                    line,
                    index,
                    "entry does not start with a '- config-keys:' line at column 0.",
                    "Put config-keys first: entries are counted and split at that line.",
                    quote_lines([lines.text(line)], line),
                )
            )
        found.append(
            Finding(
                "changelog-bytes",
                path,
                None,
                None,
                f"{len(offsets)} '- config-keys:' lines for {len(parsed.item_lines)} entries.",
                "Each entry starts with exactly one '- config-keys:' line at column 0.",
            )
        )
    return found


# ---------------------------------------------------------------------------------------------
# Append-only comparison with the base


class _Fail(Protocol):
    def __call__(
        self, index: int | None, line: int | None, message: str, hint: str, *excerpt: str
    ) -> None: ...


@dataclass(frozen=True)
class Correction:
    """An old entry whose pr-link changed (``index`` in the head; links as written)."""

    index: int
    line: int
    old: str
    new: str


@dataclass(frozen=True)
class ChangelogDiff:
    """How the head changelog differs from the base, entry by entry."""

    base_entries: int
    new_entries: tuple[int, ...]
    corrections: tuple[Correction, ...]
    findings: tuple[Finding, ...]
    pr_repo: str


def infer_pr_repo(base: bytes) -> str:
    """The ``org/repo`` most base entries link to; the InferenceX repository if none."""
    repos = Counter(f"{m.group(1).decode()}/{m.group(2).decode()}" for m in _PR_URL.finditer(base))
    return repos.most_common(1)[0][0] if repos else DEFAULT_PR_REPO


def _link_value(raw: bytes) -> str:
    value = raw.strip().decode("utf-8", "replace")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _pr_link_only_change(old: bytes, new: bytes) -> tuple[str, str] | None:
    old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
    if len(old_lines) != len(new_lines):
        return None
    change: tuple[str, str] | None = None
    for before, after in zip(old_lines, new_lines, strict=True):
        if before == after:
            continue
        first, second = _PR_LINK_LINE.match(before), _PR_LINK_LINE.match(after)
        if first is None or second is None or change is not None:
            return None
        change = (_link_value(first.group(1)), _link_value(second.group(1)))
    return change


def _first_difference(old: bytes, new: bytes) -> int:
    limit = min(len(old), len(new))
    low, high = 0, limit
    while low < high:
        middle = (low + high) // 2
        if old[low : middle + 1] == new[low : middle + 1]:
            low = middle + 1
        else:
            high = middle
    return low


def normalize_like(base: bytes, head: bytes) -> bytes:
    """``head`` with the CRLF endings and the missing final newline that ``base`` does not
    have undone, so comparing them finds what else changed."""
    if b"\r\n" in head and b"\r\n" not in base:
        head = head.replace(b"\r\n", b"\n")
    if head and base.endswith(b"\n") and not head.endswith(b"\n"):
        head += b"\n"
    return head


def canonical_pr_url(repo: str) -> re.Pattern[str]:
    return re.compile(rf"https://github\.com/{re.escape(repo)}/pull/\d+")


def diff_changelog(
    base: bytes, head: bytes, *, path: str, pr_repo: str | None = None
) -> ChangelogDiff:
    """Compare entry chunks of base and head: which head entries are new, which old entries had
    their pr-link corrected, and every append-only violation."""
    repo = pr_repo or infer_pr_repo(base)
    canonical = canonical_pr_url(repo)
    # CRLF endings and a missing final newline are the byte rule's findings, not history's.
    head = normalize_like(base, head)
    base_pre, base_chunks = split_entries(base)
    head_pre, head_chunks = split_entries(head)
    head_offsets = entry_offsets(head)
    lines = _Lines(head)
    findings: list[Finding] = []
    new: list[int] = []
    corrections: list[Correction] = []

    def at(head_index: int) -> int:
        if head_index < len(head_offsets):
            return lines.line(head_offsets[head_index])
        return lines.line(max(len(head) - 1, 0))

    def fail(index: int | None, line: int | None, message: str, hint: str, *excerpt: str) -> None:
        findings.append(
            Finding("changelog-append-only", path, line, index, message, hint, tuple(excerpt))
        )

    if base_pre != head_pre and base_chunks:
        offset = _first_difference(base_pre, head_pre)
        fail(
            None,
            lines.line(offset),
            "the text before the first entry changed.",
            "The changelog is append-only: restore it as in the base.",
        )

    def key(chunk: bytes) -> bytes:
        return _TRAILING_BLANKS.sub(b"", chunk)

    matcher = difflib.SequenceMatcher(
        None, [key(c) for c in base_chunks], [key(c) for c in head_chunks], autojunk=False
    )
    last_base = len(base_chunks) - 1
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                if i != last_base and base_chunks[i] != head_chunks[j]:
                    fail(
                        j + 1 if j + 1 < len(head_chunks) else j,
                        at(j + 1) - 1 if j + 1 < len(head_chunks) else at(j),
                        "the blank lines between old entries changed.",
                        "Keep exactly the base's bytes; entries are separated by one blank line.",
                    )
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for offset in range(paired):
            i, j = i1 + offset, j1 + offset
            change = _pr_link_only_change(key(base_chunks[i]), key(head_chunks[j]))
            if change is None:
                _report_modified(base_chunks[i], head_chunks[j], j, at(j), fail)
                continue
            old_link, new_link = change
            line = at(j) + _line_in_chunk(head_chunks[j], b"  pr-link:")
            if canonical.fullmatch(old_link):
                fail(
                    j,
                    line,
                    f"pr-link of an old entry changed from {old_link!r} to {new_link!r}.",
                    "Only a non-canonical pr-link may be corrected; this one is history.",
                )
            elif not canonical.fullmatch(new_link):
                fail(
                    j,
                    line,
                    f"old entry's pr-link corrected to {new_link!r}, which is not a canonical"
                    " PR URL.",
                    f"Use https://github.com/{repo}/pull/<N>.",
                )
            else:
                corrections.append(Correction(j, line, old_link, new_link))
        if tag in ("delete", "replace") and i2 - i1 > paired:
            gone = range(i1 + paired, i2)
            fail(
                j1 + paired,
                at(j1 + paired),
                f"{len(gone)} old entr{'y' if len(gone) == 1 else 'ies'} deleted"
                f" (base entries {gone.start + 1}..{gone.stop}).",
                "The changelog is append-only: restore them.",
            )
        if tag in ("insert", "replace") and j2 - j1 > paired:
            added = range(j1 + paired, j2)
            new.extend(added)
            if i2 <= last_base:
                fail(
                    added.start,
                    at(added.start),
                    f"new entr{'y' if len(added) == 1 else 'ies'} inserted before old entry"
                    f" {i2 + 1}.",
                    "Append new entries at the end of the file.",
                )
    if corrections and new:
        fail(
            new[0],
            at(new[0]),
            "pr-link corrections of old entries"
            f" ({', '.join(str(c.index + 1) for c in corrections)})"
            f" are mixed with {len(new)} new entr{'y' if len(new) == 1 else 'ies'}.",
            "Correct old pr-links in a change of their own.",
        )
    if not findings and not corrections and not head.startswith(base):
        offset = _first_difference(base, head)
        line = lines.line(offset)
        fail(
            _entry_at(head_offsets, offset),
            line,
            "the file does not start with the base's bytes.",
            "Keep the base's bytes unchanged and only append entries.",
            *quote_lines([lines.text(line)], line),
        )
    return ChangelogDiff(len(base_chunks), tuple(new), tuple(corrections), tuple(findings), repo)


def _line_in_chunk(chunk: bytes, prefix: bytes) -> int:
    for number, text in enumerate(chunk.split(b"\n")):
        if text.startswith(prefix):
            return number
    return 0


def _report_modified(old: bytes, new: bytes, index: int, first_line: int, fail: _Fail) -> None:
    old_lines = old.rstrip(b"\n").split(b"\n")
    new_lines = new.rstrip(b"\n").split(b"\n")
    number = next(
        (n for n, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b),
        min(len(old_lines), len(new_lines)),
    )
    before = old_lines[number].decode("utf-8", "replace") if number < len(old_lines) else ""
    after = new_lines[number].decode("utf-8", "replace") if number < len(new_lines) else ""
    fail(
        index,
        first_line + number,
        "old entry modified; only its pr-link may be corrected.",
        "The changelog is append-only: restore the entry and describe the change in a new entry"
        " at the end (if the base gained entries since this branch started, rebase onto it).",
        f"base: {before}",
        f"head: {after}",
    )


# ---------------------------------------------------------------------------------------------
# Context helpers shared by the rules


def parsed_head(ctx: LintContext) -> ParsedChangelog:
    def compute() -> ParsedChangelog:
        data = ctx.head_changelog()
        return parse_changelog(
            data or b"", path=ctx.changelog_rel, scenario_types=ctx.scenario_types
        )

    return ctx.memo(
        "changelog.parsed",
        compute,
        key=lambda: digest(ctx.changelog_rel, ctx.head_changelog(), ",".join(ctx.scenario_types)),
    )


def changed_entries(ctx: LintContext) -> frozenset[int] | None:
    """The head entries the change wrote (new ones and corrected old pr-links); ``None``
    outside PR mode, where every entry is judged."""
    if not ctx.pr_mode:
        return None
    diff = changelog_diff(ctx)
    return frozenset(diff.new_entries) | frozenset(c.index for c in diff.corrections)


def changed_lines(ctx: LintContext) -> Callable[[int], bool] | None:
    """Which changelog lines the change wrote, for the byte rules; ``None`` outside PR mode.
    The appended bytes count whole (separators included), and so does each new or corrected
    entry elsewhere with the line above it, where its separator is."""
    entries = changed_entries(ctx)
    if entries is None:
        return None
    base = ctx.base_changelog or b""
    head = normalize_like(base, ctx.head_changelog() or b"")
    lines = _Lines(head)
    offsets = entry_offsets(head)
    spans: list[range] = []
    if head.startswith(base):
        spans.append(range(lines.line(len(base)), len(lines.newlines) + 2))
    for index in entries:
        if index < len(offsets):
            end = offsets[index + 1] if index + 1 < len(offsets) else len(head)
            spans.append(range(lines.line(offsets[index]) - 1, lines.line(end) + 1))
    return lambda line: any(line in span for span in spans)


def changelog_diff(ctx: LintContext) -> ChangelogDiff:
    def compute() -> ChangelogDiff:
        return diff_changelog(
            ctx.base_changelog or b"",
            ctx.head_changelog() or b"",
            path=ctx.changelog_rel,
            pr_repo=ctx.pr_repo,
        )

    return ctx.memo(
        "changelog.diff",
        compute,
        key=lambda: digest(
            ctx.changelog_rel, ctx.base_changelog, ctx.head_changelog(), ctx.pr_repo
        ),
    )


def new_entries(ctx: LintContext) -> list[ChangelogEntry]:
    """The head entries that are not in the base (valid ones only; the schema rule reports the
    rest)."""
    entries = parsed_head(ctx).entries
    return [
        entry
        for index in changelog_diff(ctx).new_entries
        if index < len(entries) and (entry := entries[index]) is not None
    ]


def _no_changelog(ctx: LintContext) -> str | None:
    if ctx.head_changelog() is None:
        return f"no {ctx.changelog_rel} in {ctx.root}"
    return None


def _no_base(ctx: LintContext) -> str | None:
    if ctx.base_changelog is None:
        ref = ctx.base_ref or "origin/main"
        return (
            f"no base to compare with ({ref} not found; pass --infx-base REF to pytest,"
            " --base REF to infx lint)"
        )
    if ctx.head_changelog() is None and not ctx.base_changelog:
        return _no_changelog(ctx)
    return None


def _invalid_new_entry(ctx: LintContext) -> bool:
    """Whether a new entry failed the schema, so which keys it covers is unknown."""
    entries = parsed_head(ctx).entries
    return any(i < len(entries) and entries[i] is None for i in changelog_diff(ctx).new_entries)


def _needs_recipe_keys(ctx: LintContext) -> str | None:
    if ctx.keys() is None:
        if ctx.tree() is not None:
            return "recipe keys unknown (some recipe files do not load; see recipes-load)"
        return "recipe keys unknown (the recipe loader was not run)"
    return _no_changelog(ctx)


def _needs_changed_keys(ctx: LintContext) -> str | None:
    no_base = _no_base(ctx)
    if no_base is None and _invalid_new_entry(ctx):
        return "a new entry does not match the schema (see changelog-schema)"
    if no_base is None and ctx.changed() is None:
        return "changed recipe keys unknown (the recipe diff against the base was not computed)"
    return no_base


# ---------------------------------------------------------------------------------------------
# Rules


@rule(
    "changelog-schema",
    "Every changelog entry matches the strict schema (kebab-case fields, no duplicates).",
    skip_reason=_no_changelog,
)
def check_schema(ctx: LintContext) -> list[Finding]:
    found = parsed_head(ctx).findings
    entries = changed_entries(ctx)
    if entries is None:
        return list(found)
    return [f for f in found if f.entry is None or f.entry in entries]


@rule(
    "changelog-bytes",
    "The changelog's bytes: LF only, no tabs or NULs, one blank line between entries, one final"
    " newline.",
    skip_reason=_no_changelog,
)
def check_bytes(ctx: LintContext) -> list[Finding]:
    def compute() -> list[Finding]:
        return byte_findings(
            ctx.head_changelog() or b"",
            parsed_head(ctx),
            path=ctx.changelog_rel,
            scope=changed_lines(ctx),
            base_crlf=(ctx.base_changelog or b"").count(b"\r\n"),
        )

    return ctx.memo(
        "changelog.bytes",
        compute,
        key=lambda: digest(
            ctx.changelog_rel, ctx.head_changelog(), ctx.base_changelog if ctx.pr_mode else None
        ),
    )


@rule(
    "changelog-append-only",
    "The changelog starts with the base's bytes; only old pr-links may be corrected.",
    skip_reason=_no_base,
)
def check_append_only(ctx: LintContext) -> list[Finding]:
    if ctx.head_changelog() is None:
        return [
            Finding(
                "changelog-append-only",
                ctx.changelog_rel,
                None,
                None,
                f"the changelog was deleted (it exists at {ctx.base_ref}).",
                "Restore it; it is append-only.",
            )
        ]
    found = list(changelog_diff(ctx).findings)
    added = new_entries(ctx)
    flagged = [entry for entry in added if entry.append_only]
    if flagged and len(added) > 1:
        found.append(
            Finding(
                "changelog-append-only",
                ctx.changelog_rel,
                flagged[0].line,
                flagged[0].index,
                f"an 'append-only: true' entry is added together with {len(added) - 1} other new"
                " entries.",
                "An append-only entry must be the only new entry of its change.",
            )
        )
    return found


@rule(
    "changelog-pr-link",
    "New entries link to their PR: 'XXX', '.../pull/XXX' or '.../pull/<N>' (on main: the PR"
    " URL only; with a known PR number: that PR's URL or a placeholder).",
    skip_reason=_no_base,
)
def check_pr_links(ctx: LintContext) -> list[Finding]:
    repo = changelog_diff(ctx).pr_repo
    placeholder_url = f"https://github.com/{repo}/pull/{PLACEHOLDER}"
    canonical = canonical_pr_url(repo)
    number = ctx.pull.number
    own = f"https://github.com/{repo}/pull/{number}"
    found: list[Finding] = []
    for entry in new_entries(ctx):
        link = entry.pr_link
        if ctx.pull.main:
            if canonical.fullmatch(link):
                continue
            message = (
                f"on the main branch a new entry's pr-link must be its PR URL; found {link!r}."
            )
            hint = f"Replace it with https://github.com/{repo}/pull/<N>."
        elif number is not None:
            if link in (PLACEHOLDER, placeholder_url, own):
                continue
            message = f"pr-link {link!r} is not this pull request (#{number})."
            hint = f"Use '{own}' or '{PLACEHOLDER}'."
        else:
            if link in (PLACEHOLDER, placeholder_url) or canonical.fullmatch(link):
                continue
            message = f"pr-link {link!r} is not accepted for a new entry."
            hint = f"Use '{PLACEHOLDER}', '{placeholder_url}' or the PR URL."
        found.append(
            Finding(
                "changelog-pr-link",
                ctx.changelog_rel,
                entry.pr_link_line,
                entry.index,
                message,
                hint,
            )
        )
    return found


def _matcher(pattern: str, keys: frozenset[str]) -> set[str]:
    if _WILDCARD.search(pattern) is None:
        return {pattern} if pattern in keys else set()
    return set(fnmatch.filter(sorted(keys), pattern))


@rule(
    "changelog-config-keys",
    "Every config key (fnmatch wildcards allowed) names at least one recipe key.",
    skip_reason=_needs_recipe_keys,
)
def check_config_keys(ctx: LintContext) -> list[Finding]:
    keys = ctx.keys() or frozenset()
    found: list[Finding] = []
    resolved: dict[str, bool] = {}
    entries = changed_entries(ctx)
    noun = "recipe key" if ctx.master_keys() is None else "config key"
    for entry in parsed_head(ctx).valid():
        if entries is not None and entry.index not in entries:
            continue
        for pattern, line in zip(entry.config_keys, entry.key_lines, strict=True):
            if pattern not in resolved:
                resolved[pattern] = bool(_matcher(pattern, keys))
            if resolved[pattern]:
                continue
            close = difflib.get_close_matches(pattern, sorted(keys), n=1)
            hint = f"Did you mean '{close[0]}'?" if close else "Check the recipe keys."
            found.append(
                Finding(
                    "changelog-config-keys",
                    ctx.changelog_rel,
                    line,
                    entry.index,
                    f"config key {pattern!r} matches no {noun}.",
                    hint,
                )
            )
    return found


def _changed_indirectly(ctx: LintContext) -> bool:
    """Whether points may have changed through files other than their config: with master
    configs, a collector script or a recipe file a config names (InferenceX's
    ``CONFIG_FILE=...``) changes the points of keys whose block is unchanged, so an entry
    listing such a key is not superfluous; a changed block must still be covered."""
    if ctx.master_keys() is None:
        return False
    changes = ctx.change_set()
    if changes is None:
        return True
    own = {ctx.changelog_rel, *(ctx.relpath(p) for p in master_files(ctx.root, ctx.master_configs))}
    return any(name not in own for name in changes.files)


@rule(
    "changelog-coverage",
    "Each changed recipe key is covered by exactly one new entry; no entry without a change.",
    skip_reason=_needs_changed_keys,
)
def check_coverage(ctx: LintContext) -> list[Finding]:
    changed = ctx.changed() or frozenset()
    known = ctx.keys()
    if known is not None:
        # A removed recipe cannot be listed (config keys must resolve), so it needs no entry.
        changed = changed & known
    base = ctx.base_ref or "the base"
    path = ctx.changelog_rel
    added = new_entries(ctx)
    found: list[Finding] = []
    indirect = _changed_indirectly(ctx)
    if not changed:
        for entry in added:
            if not entry.evals_only and not indirect:
                found.append(
                    Finding(
                        "changelog-coverage",
                        path,
                        entry.line,
                        entry.index,
                        f"new entry, but no recipe key changed since {base}.",
                        "Remove the entry: a change that moves no benchmark point adds none.",
                    )
                )
        return found
    covering: dict[str, list[ChangelogEntry]] = {key: [] for key in changed}
    for entry in added:
        for pattern, line in zip(entry.config_keys, entry.key_lines, strict=True):
            hits = _matcher(pattern, changed)
            for hit in hits:
                if entry not in covering[hit]:
                    covering[hit].append(entry)
            unknown = known is not None and not _matcher(pattern, known)
            if not hits and not entry.evals_only and not unknown and not indirect:
                found.append(
                    Finding(
                        "changelog-coverage",
                        path,
                        line,
                        entry.index,
                        f"new entry lists {pattern!r}, but no point of it changed since {base}.",
                        "List only the keys 'infx changed' reports (evals-only entries excepted).",
                    )
                )
    end = (ctx.head_changelog() or b"").count(b"\n") or None
    for key in sorted(changed):
        entries = covering[key]
        if not entries:
            found.append(
                Finding(
                    "changelog-coverage",
                    path,
                    end,
                    None,
                    f"recipe key {key!r} changed since {base} but no new entry covers it.",
                    "Append one entry at the end whose config-keys list every changed key.",
                )
            )
        elif len(entries) > 1:
            found.append(
                Finding(
                    "changelog-coverage",
                    path,
                    entries[1].line,
                    entries[1].index,
                    f"recipe key {key!r} is covered by new entries"
                    f" {', '.join(str(e.index + 1) for e in entries)}.",
                    "List each changed key in exactly one new entry.",
                )
            )
    return found

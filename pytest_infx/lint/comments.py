"""Comment rules for shell scripts and YAML recipes.

A comment explains one line: the code line it trails, or the single line directly below it.
Rationale for a whole file, recipe, override or section belongs in the changelog entry or the PR,
where reviewers read it, not in a banner that drifts from the code. Precisely:

* A *comment line* is a line whose first non-blank character starts a comment (``#`` outside
  quotes, at the start of a word in bash or after whitespace in YAML). Text inside quoted strings,
  bash heredocs and YAML block scalars (``|``, ``>``) is never a comment. The ``#!`` shebang on
  line 1, ``# shellcheck ...`` directives (bash) and ``# yaml-language-server:`` directives (YAML)
  are not comments for these rules.
* ``comments-header``: no comment line may come before the first code line of a file.
* ``comments-broad``: outside the header, a comment line must stand alone (no other comment line
  directly above or below it; two or more consecutive comment lines form a *block* and fail), and
  the line directly below it must be a code line that does not open a block. A blank line or the
  end of the file directly below fails (the comment explains nothing), and so does a line that
  opens a block: in YAML a mapping key or ``-`` item whose value is a nested block (a recipe, an
  override, a section), in bash a function definition.
* Allowed: a trailing comment on a code line, and one comment line directly above a line it
  explains (a flag, a value, a command).
* ``comments-describe``: no comment anywhere (trailing ones included) may describe the file,
  topology or config: "this script", "this file", "this recipe", "this config[uration]", "this
  collector", "this topology" or "topology:" (any case).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cached_property, partial
from pathlib import Path
from typing import NamedTuple

from pytest_infx.files.store import digest
from pytest_infx.files.textio import NotUtf8Error, read_utf8
from pytest_infx.lint.context import Facts, LintContext
from pytest_infx.lint.findings import Check, Finding, quote_lines, quote_numbered, rule

BLANK = "blank"
CODE = "code"
COMMENT = "comment"
DIRECTIVE = "directive"

_YAML_SUFFIXES = frozenset({".yaml", ".yml"})
_SHELL_DIRECTIVE = re.compile(r"#\s*shellcheck\s")
_YAML_DIRECTIVE = re.compile(r"#\s*yaml-language-server:")
_DESCRIBES = re.compile(
    r"\bthis\s+(?:script|file|recipe|config(?:uration)?|collector|topology)\b|\btopology\s*:",
    re.IGNORECASE,
)
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^']*)'|\"([^\"]*)\"|\\?([A-Za-z0-9_][A-Za-z0-9_.-]*))")
_SHELL_WORD_BREAK = frozenset(" \t;&|()<>")
_SHELL_FUNCTION = re.compile(
    r"^\s*(?:function\s+[A-Za-z_][\w.:-]*\s*(?:\(\s*\))?|[A-Za-z_][\w.:-]*\s*\(\s*\))\s*\{?\s*$"
)
_YAML_TOKEN_START = frozenset(":-[{,?")
_YAML_BLOCK_SCALAR = re.compile(r"(?:^\s*(?:-\s+)*|:\s+)[|>][0-9+-]*\s*$")
_YAML_ITEM_MAPPING = re.compile(r"^\s*-\s+[^\s#'\"{\[][^#]*?:(?:\s|$)")
_YAML_OPENS = re.compile(r"^\s*(?:-\s+)*(?:[^\s#-][^#]*?:|-)(?:\s+[&!]\S+)*\s*$")


class SourceLine(NamedTuple):
    """One physical line. ``comment`` is the comment text (from ``#``) of a comment line or of a
    code line's trailing comment; ``opens_block`` marks a line whose body follows below it. A
    named tuple rather than a dataclass: a large repository has tens of thousands of lines."""

    number: int
    text: str
    kind: str
    comment: str | None = None
    opens_block: bool = False


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _classify(number: int, text: str, comment_at: int | None, directive: re.Pattern[str]) -> str:
    if comment_at is None:
        return BLANK if not text.strip() else CODE
    if text[:comment_at].strip():
        return CODE
    if (number == 1 and text.startswith("#!")) or directive.match(text, comment_at):
        return DIRECTIVE
    return COMMENT


_SHELL_SPECIAL = re.compile(r"[\\'\"#<]|\$'")
_SHELL_QUOTE_ENDS = {"'": re.compile("'"), '"': re.compile(r'[\\"]'), "$'": re.compile(r"[\\']")}
"""What ends a scan inside each bash quote: its closing quote, or a backslash, which escapes the
next character (not inside single quotes)."""
_YAML_SPECIAL = re.compile(r"[#'\"]")
_YAML_QUOTE_ENDS = {"'": re.compile("''?"), '"': re.compile(r'[\\"]')}
"""The same for YAML, whose single-quoted scalar writes a quote as ``''``."""

_Step = tuple[int, str | None, bool]
"""What a significant character outside quotes does: where the scan goes on, the quote it opens
(``None`` for none) and whether a comment starts at it."""


def _is_function(raw: str) -> bool:
    return _SHELL_FUNCTION.match(raw) is not None


def _past_quote(raw: str, i: int, quote: str, ends: re.Pattern[str]) -> tuple[int, str | None]:
    """Scan ``raw`` from ``i`` inside ``quote`` to the next of its ``ends``: where the scan goes
    on and the quote still open there (the line's end and ``quote`` when there is none)."""
    end = ends.search(raw, i)
    if end is None:
        return len(raw), quote
    if end.group() == "\\":
        return end.start() + 2, quote
    return end.end(), quote if end.group() == "''" else None


def _scan_line(
    raw: str,
    quote: str | None,
    special: re.Pattern[str],
    quote_ends: Mapping[str, re.Pattern[str]],
    step: Callable[[str, re.Match[str]], _Step],
) -> tuple[int | None, str | None]:
    """Find where a comment starts on ``raw`` given the quote open at its start; returns the
    comment column (or ``None``) and the quote still open at its end. Jumps between significant
    characters (``special``, a regex search), so a plain line costs one search; ``step`` says
    what each one outside quotes does."""
    i, size = 0, len(raw)
    while i < size:
        if quote is not None:
            i, quote = _past_quote(raw, i, quote, quote_ends[quote])
            continue
        match = special.search(raw, i)
        if match is None:
            break
        i, quote, comment = step(raw, match)
        if comment:
            return match.start(), None
    return None, quote


def _comment_at(raw: str, start: int, breaks: str | frozenset[str]) -> _Step:
    """A ``#`` starts a comment at the line's start or after one of ``breaks``."""
    if start == 0 or raw[start - 1] in breaks:
        return start, None, True
    return start + 1, None, False


def _shell_step(raw: str, match: re.Match[str], pending: list[tuple[str, bool]]) -> _Step:
    """A bash quote, escape, comment or heredoc; a heredoc opened on the line is appended to
    ``pending``."""
    token, start = match.group(), match.start()
    if token == "\\":
        return start + 2, None, False
    if token in _SHELL_QUOTE_ENDS:
        return match.end(), token, False
    if token == "#":
        return _comment_at(raw, start, _SHELL_WORD_BREAK)
    if raw.startswith("<<", start) and not raw.startswith("<<<", start):
        heredoc = _HEREDOC.match(raw, start)
        if heredoc is None:
            return start + 2, None, False
        word = next(group for group in heredoc.groups()[1:] if group is not None)
        pending.append((word, heredoc.group(1) == "-"))
        return heredoc.end(), None, False
    return start + (3 if raw.startswith("<<<", start) else 1), None, False


def _scan_shell_line(
    raw: str, quote: str | None, pending: list[tuple[str, bool]]
) -> tuple[int | None, str | None]:
    """:func:`_scan_line` for bash; heredocs opened on the line are appended to ``pending``."""
    step = partial(_shell_step, pending=pending)
    return _scan_line(raw, quote, _SHELL_SPECIAL, _SHELL_QUOTE_ENDS, step)


def _yaml_step(raw: str, match: re.Match[str]) -> _Step:
    """A YAML quote opens a scalar only at the start of a token (after ``:``, ``-``, ``[``,
    ``{``, ``,``, ``?`` or at the line start), so an apostrophe inside a plain scalar is text."""
    token, start = match.group(), match.start()
    if token == "#":
        return _comment_at(raw, start, " \t")
    before = raw[:start].rstrip()
    opens = not before or before[-1] in _YAML_TOKEN_START
    return start + 1, token if opens else None, False


def _scan_yaml_line(raw: str, quote: str | None) -> tuple[int | None, str | None]:
    """:func:`_scan_line` for YAML."""
    return _scan_line(raw, quote, _YAML_SPECIAL, _YAML_QUOTE_ENDS, _yaml_step)


def scan_shell(text: str) -> list[SourceLine]:
    """Classify the lines of a bash/sh script (quotes and heredocs aware)."""
    lines: list[SourceLine] = []
    quote: str | None = None
    pending: list[tuple[str, bool]] = []
    heredoc: tuple[str, bool] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if heredoc is not None:
            delimiter, strip_tabs = heredoc
            if (raw.lstrip("\t") if strip_tabs else raw) == delimiter:
                heredoc = pending.pop(0) if pending else None
            lines.append(SourceLine(number, raw, CODE))
            continue
        if quote is None and _SHELL_SPECIAL.search(raw) is None:
            opens = "(" in raw or "function" in raw
            kind = CODE if raw.strip() else BLANK
            lines.append(SourceLine(number, raw, kind, None, opens and _is_function(raw)))
            continue
        continued = quote is not None
        comment_at, quote = _scan_shell_line(raw, quote, pending)
        if pending and heredoc is None and quote is None:
            heredoc = pending.pop(0)
        if continued:
            lines.append(SourceLine(number, raw, CODE))
            continue
        kind = _classify(number, raw, comment_at, _SHELL_DIRECTIVE)
        comment = raw[comment_at:] if comment_at is not None and kind != DIRECTIVE else None
        opens = kind == CODE and _is_function(raw)
        lines.append(SourceLine(number, raw, kind, comment, opens))
    return lines


def scan_yaml(text: str) -> list[SourceLine]:
    """Classify the lines of a YAML file (quoted scalars and block scalars aware)."""
    lines: list[SourceLine] = []
    quote: str | None = None
    scalar_parent: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if scalar_parent is not None:
            if not raw.strip() or _indent(raw) > scalar_parent:
                lines.append(SourceLine(number, raw, CODE if raw.strip() else BLANK))
                continue
            scalar_parent = None
        if quote is None and _YAML_SPECIAL.search(raw) is None:
            comment_at = None
        else:
            continued = quote is not None
            comment_at, quote = _scan_yaml_line(raw, quote)
            if continued:
                lines.append(SourceLine(number, raw, CODE))
                continue
        kind = _classify(number, raw, comment_at, _YAML_DIRECTIVE)
        comment = raw[comment_at:] if comment_at is not None and kind != DIRECTIVE else None
        code = raw if comment_at is None else raw[:comment_at]
        if (
            kind == CODE
            and quote is None
            and ("|" in code or ">" in code)
            and _YAML_BLOCK_SCALAR.search(code)
        ):
            key = re.match(r"\s*(?:-\s+)*", code)
            scalar_parent = key.end() if key and ":" in code else _indent(code)
        lines.append(SourceLine(number, raw, kind, comment, False))
    return _mark_yaml_blocks(lines)


def _mark_yaml_blocks(lines: list[SourceLine]) -> list[SourceLine]:
    """A key (or ``-``) with nothing after it opens a block when the next code line is indented
    deeper, or is a ``-`` item at the same indentation (YAML allows that for a list value). A
    ``-`` item opens one too when its mapping goes on below it, as an override written
    ``- when: {tp: 4}`` with its settings on the lines under it does."""
    marked = list(lines)
    code = [n for n, line in enumerate(lines) if line.kind == CODE]
    for position, index in enumerate(code):
        line = lines[index]
        if position + 1 == len(code):
            continue
        text = line.text if line.comment is None else line.text[: -len(line.comment)]
        below = lines[code[position + 1]].text
        depth, below_depth = _indent(text), _indent(below)
        if _YAML_OPENS.match(text) is not None:
            opens = below_depth > depth or (
                below_depth == depth and below.lstrip().startswith("- ")
            )
        else:
            opens = _YAML_ITEM_MAPPING.match(text) is not None and below_depth > depth
        if opens:
            marked[index] = line._replace(opens_block=True)
    return marked


def scan_file(path: Path) -> list[SourceLine]:
    text = read_utf8(path)
    return scan_yaml(text) if path.suffix in _YAML_SUFFIXES else scan_shell(text)


def _header(lines: list[SourceLine]) -> list[SourceLine]:
    header: list[SourceLine] = []
    for line in lines:
        if line.kind == CODE:
            break
        if line.kind == COMMENT:
            header.append(line)
    return header


def _blocks(lines: list[SourceLine]) -> list[list[SourceLine]]:
    blocks: list[list[SourceLine]] = []
    for line in lines:
        if line.kind != COMMENT:
            continue
        if blocks and blocks[-1][-1].number == line.number - 1:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


def header_findings(path: str, lines: list[SourceLine]) -> list[Finding]:
    header = _header(lines)
    if not header:
        return []
    span = (
        f"line {header[0].number}"
        if len(header) == 1
        else (f"lines {header[0].number}-{header[-1].number}")
    )
    return [
        Finding(
            "comments-header",
            path,
            header[0].number,
            None,
            f"header comment ({span}) before the first line of code.",
            "Remove it: no header comments, and no description of what the file, topology or"
            " config is (a shebang and '# shellcheck' directives are fine); put the rationale in"
            " the changelog entry or the PR.",
            quote_numbered([(line.number, line.text) for line in header]),
        )
    ]


def broad_findings(path: str, lines: list[SourceLine]) -> list[Finding]:
    in_header = {line.number for line in _header(lines)}
    by_number = {line.number: line for line in lines}
    found: list[Finding] = []
    for block in _blocks(lines):
        if block[0].number in in_header:
            continue
        first, last = block[0].number, block[-1].number
        excerpt = quote_lines([line.text for line in block], first)
        below = by_number.get(last + 1)
        if len(block) > 1:
            message = f"comment block of {len(block)} lines (lines {first}-{last})."
            hint = (
                "A comment explains only the line it is on or the single line below it: keep one"
                " line directly above the line it explains and put the rationale in the"
                " changelog entry or the PR."
            )
        elif below is None or below.kind == BLANK:
            message = "comment followed by a blank line (or the end of the file) explains no line."
            hint = "Put it directly above the line it explains, or remove it."
        elif below.opens_block:
            message = (
                f"comment directly above '{below.text.strip()}', which opens a block (a recipe,"
                " override, section or function)."
            )
            hint = (
                "Comment the specific line that needs it, or move the rationale to the changelog"
                " entry or the PR."
            )
            excerpt = (*excerpt, *quote_lines([below.text], below.number))
        else:
            continue
        found.append(Finding("comments-broad", path, first, None, message, hint, excerpt))
    return found


def describe_findings(path: str, lines: list[SourceLine]) -> list[Finding]:
    found: list[Finding] = []
    for line in lines:
        if line.comment is None:
            continue
        match = _DESCRIBES.search(line.comment)
        if match is None:
            continue
        found.append(
            Finding(
                "comments-describe",
                path,
                line.number,
                None,
                f"comment describes the file, topology or config ({match.group(0)!r}).",
                "Remove it; what the file is shows in its name and content, and the why goes in"
                " the changelog entry or the PR.",
                quote_lines([line.text], line.number),
            )
        )
    return found


Spanned = tuple[Finding, int, int]
FileFindings = tuple[list[Spanned], list[Spanned], list[Spanned]]
_WHOLE_FILE = (0, 1 << 30)


def _spans(found: list[Finding], last: dict[int, int]) -> list[Spanned]:
    """Each finding with the lines it judges: from its line through ``last[line]``."""
    return [(f, f.line or 0, last.get(f.line or 0, f.line or 0)) for f in found]


def _not_utf8(rel: str, exc: NotUtf8Error) -> FileFindings:
    """One finding per comment rule: a file that is not UTF-8 cannot be judged by any."""

    def one(rule_id: str) -> list[Spanned]:
        message = (
            f"not valid UTF-8 at line {exc.line}, column {exc.column} (byte 0x{exc.byte:02x});"
            " the comment rules cannot read it."
        )
        finding = Finding(rule_id, rel, exc.line, None, message, "Save the file as UTF-8.")
        return [(finding, *_WHOLE_FILE)]

    return one("comments-header"), one("comments-broad"), one("comments-describe")


def _file_findings(rel: str, path: Path) -> FileFindings:
    """The header, broad and describe findings of one file, reported as ``rel``, each with
    the span of lines it is about (so PR mode can keep those the change touched)."""
    try:
        lines = scan_file(path)
    except NotUtf8Error as exc:
        return _not_utf8(rel, exc)
    header = _header(lines)
    header_last = {header[0].number: header[-1].number} if header else {}
    block_last = {block[0].number: block[-1].number + 1 for block in _blocks(lines)}
    return (
        _spans(header_findings(rel, lines), header_last),
        _spans(broad_findings(rel, lines), block_last),
        _spans(describe_findings(rel, lines), {}),
    )


def _compute_findings_by_file(ctx: LintContext) -> list[FileFindings]:
    def one(path: Path) -> FileFindings:
        return _file_findings(ctx.relpath(path), path)

    targets = ctx.comment_targets()
    if ctx.store is not None:
        name = f"comments.v2.{digest(str(ctx.root))[:16]}"
        return list(ctx.store.per_file(name, targets, one).values())
    found: list[FileFindings] = []
    for path in targets:
        try:
            found.append(one(path))
        except OSError:
            continue
    return found


def findings_by_file(ctx: LintContext) -> list[FileFindings]:
    """Every comment-checked file's findings, once per context; with a store, a file is only
    scanned again when its size or modification time changed."""
    return ctx.facts(_CommentFacts).findings_by_file


def _judged(ctx: LintContext, which: int) -> list[Finding]:
    """The findings of one comment rule; in PR mode only those on lines the change wrote."""
    changes = ctx.scope()
    kept: list[Finding] = []
    for found in findings_by_file(ctx):
        for finding, first, last in found[which]:
            if changes is None or changes.touches(finding.path, range(first, last + 1)):
                kept.append(finding)
    return kept


def _comment_rule(rule_id: str, description: str, which: int) -> Check:
    """The rule ``rule_id``: the findings a file's one scan filed at position ``which``."""

    def findings(ctx: LintContext) -> list[Finding]:
        return _judged(ctx, which)

    return rule(rule_id, description, skip_reason=_no_files)(findings)


def _no_files(ctx: LintContext) -> str | None:
    if not ctx.comment_files:
        return "no shell scripts or recipe YAML files to check"
    if not ctx.comment_targets():
        return f"no shell script or recipe YAML file changed since {ctx.base_ref}"
    return None


check_header = _comment_rule(
    "comments-header",
    "No header comment at the top of a script or recipe (a shebang is fine).",
    0,
)

check_broad = _comment_rule(
    "comments-broad",
    "A comment explains one line: no comment blocks, none above a block, none before a blank.",
    1,
)

check_describe = _comment_rule(
    "comments-describe",
    "No comment describes the file, topology or config ('This script', 'Topology:').",
    2,
)


class _CommentFacts(Facts):
    """The comment findings of every judged file, computed once for the three comment rules."""

    @cached_property
    def findings_by_file(self) -> list[FileFindings]:
        return _compute_findings_by_file(self.ctx)

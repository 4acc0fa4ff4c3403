"""The changelog's bytes: line endings, forbidden characters, blank lines and entry starts.

Entries start with a ``- config-keys:`` line at column 0 and are separated by exactly one blank
line. The file is split at the column-0 ``- `` lines that start YAML list items, so an entry
that lost or moved its ``config-keys`` is still one entry (one schema finding, not an old entry
that seems to have grown); each rule here is a linear scan over bytes, and a finding names the
line (and column) a person would open.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable

from pytest_infx.lint.changelog.entries import ParsedChangelog, missing_field
from pytest_infx.lint.findings import Finding, quote_lines

CRLF_MESSAGE = "uses CRLF line endings"
_ENTRY_START = re.compile(rb"^- config-keys:", re.MULTILINE)
_ITEM_START = re.compile(rb"^-(?=[ \r\n]|\Z)", re.MULTILINE)
_BLANK_LINE = re.compile(rb"^[ \t]*\n", re.MULTILINE)
_FORBIDDEN = re.compile(rb"[\t\r\x00]")
_TRAILING_SPACE = re.compile(rb"\S([ \t]+)$", re.MULTILINE)
_FORBIDDEN_NAMES = {b"\t": "a tab", b"\r": "a carriage return", b"\x00": "a NUL byte"}
_REPORT_CAP = 10


class Lines:
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
    """Byte offsets of the lines that start entries (top-level list items)."""
    return [match.start() for match in _ITEM_START.finditer(data)]


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


def entry_at(offsets: list[int], offset: int) -> int | None:
    position = bisect.bisect_right(offsets, offset) - 1
    return position if position >= 0 else None


def _beyond_cap(path: str, total: int, what: str) -> list[Finding]:
    """One summary finding for the occurrences past the first ``_REPORT_CAP`` shown one by one,
    so a file full of tabs gives a readable report."""
    if total <= _REPORT_CAP:
        return []
    return [Finding("changelog-bytes", path, None, None, f"{total - _REPORT_CAP} more {what}.", "")]


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
    lines = Lines(data)
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
                "changelog-bytes", path, line, entry_at(offsets, offset), message, hint, excerpt
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
        found.extend(_beyond_cap(path, total, f"occurrences of {_FORBIDDEN_NAMES[char]}"))

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
    found.extend(_beyond_cap(path, trailing, "lines with trailing whitespace"))
    for run in _blank_runs(data):
        start, end = run[0][0], run[-1][1]
        # A run the change made or lengthened is reported at the first blank line it wrote.
        begin = next((b for b, _ in run if wanted(b)), run[0][0])
        spaces = [b for b, e in run if data[b:e] != b"\n"]
        many = f"{len(run)} blank lines" if len(run) > 1 else "a blank line"
        # One finding per run: a misplaced run that also holds spaces is still one cause.
        aside = " (holding only whitespace)" if spaces else ""
        if start == 0:
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
    keyed = [match.start() for match in _ENTRY_START.finditer(data)]
    if parsed.yaml_ok and len(parsed.item_lines) != len(keyed):
        start_lines = {lines.line(offset) for offset in keyed}
        # An entry without config-keys is the schema rule's finding; here it would be a second.
        keyless = {f.entry for f in parsed.findings if f.message == missing_field("config-keys")}
        odd = [
            (i, line)
            for i, line in enumerate(parsed.item_lines)
            if line not in start_lines and i not in keyless and (scope is None or scope(line))
        ]
        if not odd and (scope is not None or len(parsed.item_lines) - len(keyless) == len(keyed)):
            return found
        for index, line in odd[:_REPORT_CAP]:
            found.append(
                Finding(
                    "changelog-bytes",
                    path,
                    line,
                    index,
                    "entry does not start with a '- config-keys:' line at column 0.",
                    "Put config-keys first: InferenceX's tools count entries at that line.",
                    quote_lines([lines.text(line)], line),
                )
            )
        if odd and len(odd) <= _REPORT_CAP:
            return found
        found.append(
            Finding(
                "changelog-bytes",
                path,
                None,
                None,
                f"{len(keyed)} '- config-keys:' lines for {len(parsed.item_lines)} entries.",
                "Each entry starts with exactly one '- config-keys:' line at column 0.",
            )
        )
    return found

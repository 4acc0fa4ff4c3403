"""The append-only rule: how the head changelog differs from the base, entry by entry.

Because the file only grows, the head must start with the base's bytes; entries are split at
their top-level list items (so an entry without ``config-keys`` is not read as the end of the
entry above it) and matched with the base's, and only an old entry's ``pr-link`` may change (to
a canonical PR URL, never in the same change as new entries). CRLF endings and a missing final
newline are undone first (on both sides when the base itself has CRLF): the byte rules report
those, once.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from pytest_infx.lint.changelog.layout import Lines, entry_at, entry_offsets, split_entries
from pytest_infx.lint.findings import Finding, quote_lines

DEFAULT_PR_REPO = "SemiAnalysisAI/InferenceX"
_PR_URL = re.compile(rb"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/\d+")
_PR_LINK_LINE = re.compile(rb"^  pr-link:(.*)$")
_TRAILING_BLANKS = re.compile(rb"(?:\n[ \t]*)*\n?\Z")


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


def comparable(base: bytes, head: bytes) -> tuple[bytes, bytes]:
    """Base and head as the history comparison reads them: :func:`normalize_like`, and a
    CRLF base that the change only appended to read with LF endings on both sides, so its
    endings are not a difference."""
    if b"\r\n" in base and head.startswith(base):
        return base.replace(b"\r\n", b"\n"), head.replace(b"\r\n", b"\n")
    return base, normalize_like(base, head)


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
    base, head = comparable(base, head)
    base_pre, base_chunks = split_entries(base)
    head_pre, head_chunks = split_entries(head)
    head_offsets = entry_offsets(head)
    lines = Lines(head)
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
            entry_at(head_offsets, offset),
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

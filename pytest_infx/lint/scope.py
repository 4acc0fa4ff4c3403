"""What a pull request changed: the files and lines that differ from the base.

A rule in PR mode judges only what the change wrote, because a repository's history holds
defects the append-only changelog forbids anyone to fix and scripts nobody touches; judging
them fails every pull request and teaches people to turn lint off. One ``git diff -U0`` names
the changed files and, per file, the lines of the working tree that the change wrote; untracked
files count as wholly new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.files.git import prefix, untracked_files, written_lines_diff
from pytest_infx.settings import Environment

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_PULL_REF = re.compile(r"^refs/pull/(\d+)/(?:merge|head)$")
_MAIN_REFS = frozenset({"refs/heads/main", "refs/heads/master"})


@dataclass(frozen=True)
class ChangeSet:
    """Changed files (repository-relative POSIX paths) and, for each, the working-tree lines
    the change wrote; ``None`` means the whole file is new (added or untracked)."""

    files: dict[str, frozenset[int] | None]

    def touches(self, rel: str, lines: range | None = None) -> bool:
        """Whether ``rel`` changed at all (``lines=None``) or on any of ``lines``."""
        if rel not in self.files:
            return False
        written = self.files[rel]
        if written is None or lines is None:
            return True
        return any(line in written for line in lines)


def parse_diff(diff: bytes) -> dict[str, frozenset[int] | None]:
    """Files and written lines from ``git diff -U0 --no-renames`` output. A deletion touches
    the line above it, so a comment left above a deleted line counts as changed."""
    files: dict[str, frozenset[int] | None] = {}
    for section in diff.split(b"\ndiff --git "):
        header_end = section.find(b"\n@@")
        head = section if header_end < 0 else section[:header_end]
        new = re.search(rb"^\+\+\+ (?:b/)?(.+)$", head, re.MULTILINE)
        old = re.search(rb"^--- (?:a/)?(.+)$", head, re.MULTILINE)
        if new is None or old is None:
            continue
        name = new.group(1).decode("utf-8", "replace")
        if name == "/dev/null":
            continue
        if old.group(1) == b"/dev/null":
            files[name] = None
            continue
        written: set[int] = set()
        for hunk in _HUNK.finditer(section):
            start = int(hunk.group(1))
            count = 1 if hunk.group(2) is None else int(hunk.group(2))
            written.update(range(start, start + count) if count else (start,))
        files[name] = frozenset(written)
    return files


def changes_since(root: Path, base: str) -> ChangeSet | None:
    """The change from ``base`` to the working tree, or ``None`` when git cannot say."""
    diff = written_lines_diff(root, base)
    untracked = untracked_files(root)
    if diff is None or untracked is None:
        return None
    under = prefix(root) or ""
    files = {
        name.removeprefix(under): lines
        for name, lines in parse_diff(diff).items()
        if name.startswith(under)
    }
    for name in untracked:
        files[name] = None
    return ChangeSet(files)


@dataclass(frozen=True)
class PullRequest:
    """Where the change is going: a pull request of a known number, the main branch (where
    a placeholder pr-link is no longer acceptable), or unknown (a local run)."""

    number: int | None = None
    main: bool = False


def pull_request_from_env(env: Environment) -> PullRequest:
    """GitHub Actions' variables: ``GITHUB_REF`` is ``refs/pull/<N>/merge`` on a pull request
    and ``refs/heads/main`` on a push to main."""
    source = env.github
    if source.get("GITHUB_ACTIONS") != "true":
        return PullRequest()
    ref = source.get("GITHUB_REF", "")
    pulled = _PULL_REF.match(ref)
    if pulled is not None:
        return PullRequest(number=int(pulled.group(1)))
    if ref in _MAIN_REFS and source.get("GITHUB_EVENT_NAME") == "push":
        return PullRequest(main=True)
    return PullRequest()

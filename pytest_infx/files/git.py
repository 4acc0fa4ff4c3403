"""The one way pytest-infx reads git: lint's base and change, ``--changed-since``, ``infx
changed``, the commit a run or an engine checkout was made from. No other module spells a git
command; each question asked of git is a function here.

Every call runs without a pager or a prompt, either of which would hang a run; several objects
come from one ``git cat-file --batch``; a missing ``git`` reads as "no base" where a caller asks
whether something exists, and as :class:`GitError` where it needs the answer.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class GitError(RuntimeError):
    """A git command that had to succeed failed; the message has git's own words."""


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def _git(root: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``root``, whatever its status (``FileNotFoundError`` without git)."""
    return subprocess.run(
        ["git", *args], cwd=root, input=data, capture_output=True, check=False, env=git_env()
    )


def _output(root: Path, *args: str, data: bytes | None = None) -> bytes:
    """What ``git ARGS`` prints; :class:`GitError` when it fails or git is missing."""
    try:
        done = _git(root, *args, data=data)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()
        raise GitError(f"git {' '.join(args)} failed: {said}")
    return done.stdout


@dataclass(frozen=True)
class GitObject:
    sha: str
    kind: str
    body: bytes


def objects(root: Path, names: Sequence[str]) -> list[GitObject | None]:
    """Each named object (``REF:path``, ``REF^{commit}``, a sha), ``None`` where it is missing,
    from one ``git cat-file --batch``."""
    if not names:
        return []
    out = _output(root, "cat-file", "--batch", data="".join(f"{n}\n" for n in names).encode())
    found: list[GitObject | None] = []
    pos = 0
    for _ in names:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            found.append(None)
            continue
        size = int(header[2])
        found.append(GitObject(header[0].decode(), header[1].decode(), out[pos : pos + size]))
        pos += size + 1
    return found


def _answer(root: Path, *args: str) -> bytes | None:
    """What ``git ARGS`` prints, or ``None`` when git cannot say (no git, no repository, a
    missing ref): for questions whose caller reads no answer as "unknown"."""
    try:
        done = _git(root, *args)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return done.stdout if done.returncode == 0 else None


def commit(root: Path, ref: str) -> str | None:
    """The commit ``ref`` names now; ``None`` when it names none (or there is no git)."""
    found = _answer(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    text = "" if found is None else found.decode().strip()
    return text or None


def ref_exists(root: Path, ref: str) -> bool:
    return commit(root, ref) is not None


def _names(listing: bytes) -> list[str]:
    return [name for name in listing.decode("utf-8", "replace").split("\0") if name]


def listed_files(root: Path) -> list[str] | None:
    """Tracked and untracked files not ignored, relative to ``root``, sorted; ``None`` when
    ``root`` is in no work tree."""
    found = _answer(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return None if found is None else sorted(set(_names(found)))


def untracked_files(root: Path) -> list[str] | None:
    """Untracked files not ignored, relative to ``root``; ``None`` when git cannot say."""
    found = _answer(root, "ls-files", "-z", "--others", "--exclude-standard")
    return None if found is None else _names(found)


def written_lines_diff(root: Path, base: str) -> bytes | None:
    """``git diff -U0`` from ``base`` to the working tree (no renames, colour or external
    diff), for the changed lines; ``None`` when git cannot say."""
    return _answer(root, "diff", "-U0", "--no-renames", "--no-color", "--no-ext-diff", base, "--")


def prefix(root: Path) -> str | None:
    """Where ``root`` is under its work tree's top (``sub/``, ``""`` at the top)."""
    found = _answer(root, "rev-parse", "--show-prefix")
    return None if found is None else found.decode().strip()


def top(root: Path) -> Path:
    """The top of the work tree holding ``root``; :class:`GitError` outside one."""
    return Path(_output(root, "rev-parse", "--show-toplevel").decode().strip()).resolve()


def changed_paths(root: Path, base: str) -> tuple[Path, set[Path]]:
    """``(top, paths)``: the files that differ between ``base`` and the working tree
    (tracked changes, deletions and untracked files), resolved under the work tree's top;
    :class:`GitError` when git cannot say."""
    found = top(root)
    diff = _output(root, "diff", "--name-only", "--no-renames", "-z", base, "--")
    others = _output(root, "ls-files", "--others", "--exclude-standard", "-z", "--full-name")
    return found, {found / name for name in _names(diff + b"\0" + others)}


def blobs_under(root: Path, ref: str, relative: str) -> list[tuple[str, str]]:
    """``(path from the top, blob sha)`` of every file under ``relative`` (a folder from the
    work tree's top) at ``ref``; :class:`GitError` when git cannot say."""
    listing = _output(root, "ls-tree", "--full-tree", "-r", "-z", ref, "--", relative)
    entries: list[tuple[str, str]] = []
    for line in listing.split(b"\0"):
        if not line:
            continue
        meta, raw_name = line.split(b"\t", 1)
        _mode, kind, sha = meta.split()
        if kind == b"blob":
            entries.append((raw_name.decode(), sha.decode()))
    return entries


def read_base(root: Path, ref: str, path: Path) -> tuple[str | None, bytes | None]:
    """The commit ``ref`` names and the bytes of ``path`` there, from one ``git cat-file``:
    ``(None, None)`` if the ref is missing, ``(commit, b"")`` if the file is."""
    rel = path.relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    try:
        commit, blob = objects(root, [f"{ref}^{{commit}}", f"{ref}:./{rel}"])
    except GitError:
        return None, None
    if commit is None:
        return None, None
    return commit.sha, blob.body if blob is not None else b""


def read_base_file(root: Path, ref: str, path: Path) -> bytes | None:
    """The bytes of ``path`` at ``ref``: ``None`` if the ref is missing, ``b""`` if the file is."""
    return read_base(root, ref, path)[1]


def toplevel(folder: Path) -> Path | None:
    """The top folder of the work tree holding ``folder``; ``None`` outside one."""
    found = _answer(folder, "rev-parse", "--show-toplevel")
    text = "" if found is None else found.decode("utf-8", "replace").strip()
    return Path(text).resolve() if text else None


def head(folder: Path) -> tuple[str, str]:
    """The checked-out branch (``""`` when detached or outside a work tree) and commit
    (``""`` outside one) of ``folder``."""
    found: list[str] = []
    for args in (("symbolic-ref", "--short", "-q", "HEAD"), ("rev-parse", "-q", "HEAD")):
        try:
            done = _git(folder, *args)
        except (FileNotFoundError, NotADirectoryError):
            return "", ""
        text = done.stdout.decode("utf-8", "replace").strip()
        found.append(text if done.returncode == 0 else "")
    return found[0], found[1]

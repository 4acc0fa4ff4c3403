"""The one way pytest-infx reads git: lint's base, ``--changed-since`` and ``infx changed``.

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


def git(root: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``root``, whatever its status (``FileNotFoundError`` without git)."""
    return subprocess.run(
        ["git", *args], cwd=root, input=data, capture_output=True, check=False, env=git_env()
    )


def output(root: Path, *args: str, data: bytes | None = None) -> bytes:
    """What ``git ARGS`` prints; :class:`GitError` when it fails or git is missing."""
    try:
        done = git(root, *args, data=data)
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
    out = output(root, "cat-file", "--batch", data="".join(f"{n}\n" for n in names).encode())
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


def ref_exists(root: Path, ref: str) -> bool:
    try:
        done = git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except (FileNotFoundError, NotADirectoryError):
        return False
    return done.returncode == 0


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
    try:
        done = git(folder, "rev-parse", "--show-toplevel")
    except (FileNotFoundError, NotADirectoryError):
        return None
    top = done.stdout.decode("utf-8", "replace").strip()
    return Path(top).resolve() if done.returncode == 0 and top else None


def head(folder: Path) -> tuple[str, str]:
    """The checked-out branch (``""`` when detached or outside a work tree) and commit
    (``""`` outside one) of ``folder``."""
    found: list[str] = []
    for args in (("symbolic-ref", "--short", "-q", "HEAD"), ("rev-parse", "-q", "HEAD")):
        try:
            done = git(folder, *args)
        except (FileNotFoundError, NotADirectoryError):
            return "", ""
        text = done.stdout.decode("utf-8", "replace").strip()
        found.append(text if done.returncode == 0 else "")
    return found[0], found[1]

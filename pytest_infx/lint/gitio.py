"""The git reads lint needs: whether a ref exists, and a file's bytes at a ref.

Every call runs without a pager or a prompt, either of which would hang a lint run, and a
missing ``git`` reads as "no base" rather than a traceback.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DEFAULT_BASE_REF = "origin/main"


def git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False, env=git_env())


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def ref_exists(root: Path, ref: str) -> bool:
    try:
        done = git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except FileNotFoundError:
        return False
    return done.returncode == 0


def default_base_ref(root: Path) -> str | None:
    """``origin/main`` when the clone has it, else ``None`` (no base: base-relative rules skip)."""
    return DEFAULT_BASE_REF if ref_exists(root, DEFAULT_BASE_REF) else None


def read_base(root: Path, ref: str, path: Path) -> tuple[str | None, bytes | None]:
    """The commit ``ref`` names and the bytes of ``path`` there, from one ``git cat-file``:
    ``(None, None)`` if the ref is missing, ``(commit, b"")`` if the file is."""
    rel = path.relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    request = f"{ref}^{{commit}}\n{ref}:./{rel}\n".encode()
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=root,
            input=request,
            capture_output=True,
            check=False,
            env=git_env(),
        )
    except FileNotFoundError:
        return None, None
    out = done.stdout
    objects: list[tuple[str, bytes] | None] = []
    pos = 0
    for _ in range(2):
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            objects.append(None)
            continue
        size = int(header[2])
        objects.append((header[0].decode(), out[pos : pos + size]))
        pos += size + 1
    commit = objects[0] if objects else None
    if done.returncode != 0 or commit is None:
        return None, None
    blob = objects[1] if len(objects) > 1 else None
    return commit[0], blob[1] if blob is not None else b""


def read_base_file(root: Path, ref: str, path: Path) -> bytes | None:
    """The bytes of ``path`` at ``ref``: ``None`` if the ref is missing, ``b""`` if the file is."""
    return read_base(root, ref, path)[1]


def git_toplevel(folder: Path) -> Path | None:
    """The top folder of the work tree holding ``folder``; ``None`` outside one."""
    try:
        done = git(folder, "rev-parse", "--show-toplevel")
    except (FileNotFoundError, NotADirectoryError):
        return None
    top = done.stdout.decode("utf-8", "replace").strip()
    return Path(top).resolve() if done.returncode == 0 and top else None

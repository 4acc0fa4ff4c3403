from __future__ import annotations

from pathlib import Path

from pytest_infx.lint.context import (
    build_context,
    default_base_ref,
    find_comment_files,
    read_base_file,
)

from .helpers import git


def _repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.invalid")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "README.md").write_text("x\n")
    git(tmp_path, "add", "README.md")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_default_base_ref_is_origin_main_only_when_it_exists(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert default_base_ref(repo) is None
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    assert default_base_ref(repo) == "origin/main"


def test_default_base_ref_outside_git(tmp_path: Path) -> None:
    assert default_base_ref(tmp_path) is None


def test_base_file_missing_ref_is_none_missing_file_is_empty(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    path = repo / "perf-changelog.yaml"
    assert read_base_file(repo, "nope", path) is None
    assert read_base_file(repo, "HEAD", path) == b""
    path.write_bytes(b"- config-keys:\n")
    git(repo, "add", "perf-changelog.yaml")
    git(repo, "commit", "-q", "-m", "changelog")
    path.write_bytes(b"changed\n")
    assert read_base_file(repo, "HEAD", path) == b"- config-keys:\n"
    ctx = build_context(repo, base_ref="HEAD")
    assert ctx.base_changelog == b"- config-keys:\n"
    assert ctx.head_changelog() == b"changed\n"


def test_comment_files_are_scripts_and_recipe_yaml_only(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    files = {
        "scripts/collect.sh": "echo\n",
        "scripts/run": "#!/usr/bin/env bash\necho\n",
        "scripts/tool": "#!/usr/bin/env python3\n",
        "recipes/a.yaml": "key: a\n",
        "recipes/_base/b.yml": "key: b\n",
        "golden/curve.yaml": "# Source run\n",
        "notes.txt": "x\n",
        "ignored/x.sh": "echo\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / ".gitignore").write_text("ignored/\n")
    found = {path.relative_to(repo).as_posix() for path in find_comment_files(repo)}
    assert found == {"scripts/collect.sh", "scripts/run", "recipes/a.yaml", "recipes/_base/b.yml"}


def test_memo_computes_once(tmp_path: Path) -> None:
    ctx = build_context(tmp_path, comment_files=())
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls) + 4

    assert ctx.memo("x", compute) == 5
    assert ctx.memo("x", compute) == 5
    assert calls == [1]

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import ClassVar

from pytest_infx.lint.context import (
    Facts,
    build_context,
    default_base_ref,
    find_comment_files,
    read_base_file,
)
from pytest_infx.recipes.loader import Tree

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


class _Counted(Facts):
    calls: ClassVar[list[Path]] = []

    @cached_property
    def root_name(self) -> str:
        self.calls.append(self.ctx.root)
        return self.ctx.root.name


def test_a_family_of_facts_is_computed_once_per_context(tmp_path: Path) -> None:
    ctx = build_context(tmp_path, comment_files=())
    assert ctx.facts(_Counted).root_name == ctx.facts(_Counted).root_name == tmp_path.name
    assert _Counted.calls == [tmp_path.resolve()]
    again = build_context(tmp_path, comment_files=())
    assert again.facts(_Counted) is not ctx.facts(_Counted)
    assert again == ctx


def test_derived_values_are_computed_on_first_use_only(tmp_path: Path) -> None:
    reads: list[Tree] = []

    def load() -> Tree:
        reads.append(Tree((), {}))
        return reads[-1]

    ctx = build_context(tmp_path, comment_files=(), load_tree=load)
    assert "tree" not in vars(ctx.derived)
    assert ctx.tree() is ctx.tree() is reads[0]
    assert len(reads) == 1

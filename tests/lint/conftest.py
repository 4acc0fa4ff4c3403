from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from pytest_infx.lint.context import LintContext, build_context

from .helpers import RECIPE_KEYS, git, repo_files, write_files

MakeRepo = Callable[..., LintContext]


@pytest.fixture
def changelog_repo(tmp_path: Path) -> MakeRepo:
    """A git repo whose ``origin/main`` holds ``base``; the working tree holds ``head``."""

    def make(
        base: str | bytes | None,
        head: str | bytes | None,
        *,
        recipe_keys: frozenset[str] | None = RECIPE_KEYS,
        changed: Sequence[str] | None = None,
        pr_repo: str | None = None,
    ) -> LintContext:
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.email", "t@example.invalid")
        git(repo, "config", "user.name", "t")
        path = repo / "perf-changelog.yaml"
        (repo / "README.md").write_text("readme\n")
        git(repo, "add", "README.md")
        if base is not None:
            path.write_bytes(base.encode() if isinstance(base, str) else base)
            git(repo, "add", "perf-changelog.yaml")
        git(repo, "commit", "-q", "-m", "base")
        git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
        if head is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(head.encode() if isinstance(head, str) else head)
        return build_context(
            repo,
            base_ref="origin/main",
            recipe_keys=recipe_keys,
            changed_keys=changed,
            comment_files=(),
            pr_repo=pr_repo,
        )

    return make


@pytest.fixture
def local_context(tmp_path: Path) -> Callable[..., LintContext]:
    """A context on a plain folder (no git base) holding ``head`` as the changelog."""

    def make(head: str | bytes, **kwargs: object) -> LintContext:
        path = tmp_path / "perf-changelog.yaml"
        path.write_bytes(head.encode() if isinstance(head, str) else head)
        return build_context(tmp_path, comment_files=(), **kwargs)  # type: ignore[arg-type]

    return make


MakeRulesRepo = Callable[..., LintContext]


@pytest.fixture
def rules_repo(tmp_path: Path) -> MakeRulesRepo:
    """A folder with recipes and golden curves that pass every rule, changed by ``files``
    (``None`` deletes a file); returns a fresh context on it."""

    def make(changes: dict[str, str | None] | None = None) -> LintContext:
        root = tmp_path / "repo"
        write_files(root, {**repo_files(), **(changes or {})})
        return build_context(root, comment_files=())

    return make

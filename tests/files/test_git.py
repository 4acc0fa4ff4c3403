from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_infx.files.git import (
    GitError,
    blobs_under,
    changed_paths,
    commit,
    head,
    listed_files,
    objects,
    prefix,
    read_base,
    ref_exists,
    toplevel,
    untracked_files,
    written_lines_diff,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()

    def run(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    run("init", "-q", "-b", "main")
    run("config", "user.email", "t@example.com")
    run("config", "user.name", "t")
    (root / "a.txt").write_text("first\n")
    run("add", "a.txt")
    run("commit", "-q", "-m", "one")
    (root / "a.txt").write_text("second\n")
    return root


def test_a_file_at_a_ref_and_the_commit_come_from_one_read(repo: Path) -> None:
    sha, body = read_base(repo, "main", repo / "a.txt")
    assert sha == head(repo)[1] == commit(repo, "main")
    assert body == b"first\n"
    assert read_base(repo, "main", Path("gone.txt"))[1] == b""
    assert read_base(repo, "no-such-ref", Path("a.txt")) == (None, None)


def test_several_objects_come_back_in_order_with_missing_ones_as_none(repo: Path) -> None:
    found = objects(repo, ["main:a.txt", "main:missing.txt", "main^{commit}"])
    assert [o.kind if o else None for o in found] == ["blob", None, "commit"]
    assert found[0] is not None and found[0].body == b"first\n"
    assert objects(repo, []) == []


def test_a_failing_command_raises_with_gits_own_words(repo: Path) -> None:
    assert ref_exists(repo, "main") and not ref_exists(repo, "nope")
    assert commit(repo, "nope") is None
    with pytest.raises(GitError, match=r"git diff --name-only .* nope -- failed: fatal"):
        changed_paths(repo, "nope")


def test_the_top_of_the_work_tree_or_none_outside_one(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    assert toplevel(repo / "sub") == repo.resolve()
    outside = tmp_path / "plain"
    outside.mkdir()
    assert toplevel(outside) is None


def test_the_change_since_a_ref_is_its_files_and_written_lines(repo: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "new.txt").write_text("new\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "skip.log").write_text("ignored\n")
    assert listed_files(repo) == [".gitignore", "a.txt", "sub/new.txt"]
    assert sorted(untracked_files(repo) or []) == [".gitignore", "sub/new.txt"]
    assert untracked_files(repo / "sub") == ["new.txt"]
    assert prefix(repo) == "" and prefix(repo / "sub") == "sub/"
    diff = written_lines_diff(repo, "main") or b""
    assert b"+second" in diff and b"-first" in diff
    top, changed = changed_paths(repo, "main")
    assert top == repo.resolve() == changed_paths(repo / "sub", "main")[0]
    assert changed == {top / "a.txt", top / ".gitignore", top / "sub" / "new.txt"}
    assert [name for name, _ in blobs_under(repo, "main", ".")] == ["a.txt"]


def test_outside_a_work_tree_git_cannot_say(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert listed_files(plain) is None
    assert untracked_files(plain) is None
    assert written_lines_diff(plain, "main") is None
    assert prefix(plain) is None
    assert commit(plain, "HEAD") is None
    assert head(plain) == ("", "")
    assert head(tmp_path / "missing") == ("", "")

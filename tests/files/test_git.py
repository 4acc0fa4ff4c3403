from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_infx.files.git import (
    GitError,
    objects,
    output,
    read_base,
    ref_exists,
    toplevel,
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
    commit, body = read_base(repo, "main", repo / "a.txt")
    assert commit == output(repo, "rev-parse", "main").decode().strip()
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
    with pytest.raises(GitError, match="git rev-parse --verify nope failed: fatal"):
        output(repo, "rev-parse", "--verify", "nope")


def test_the_top_of_the_work_tree_or_none_outside_one(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    assert toplevel(repo / "sub") == repo.resolve()
    outside = tmp_path / "plain"
    outside.mkdir()
    assert toplevel(outside) is None

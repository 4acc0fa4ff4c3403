from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pytest_infx.usage import UsageError, existing_folder, folder_problem, writable_folder


def test_a_folder_to_write_may_be_missing_below_a_writable_one(tmp_path: Path) -> None:
    assert folder_problem(tmp_path / "new" / "deeper") is None
    assert folder_problem(tmp_path) is None


def test_a_file_or_a_path_below_a_file_is_no_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert folder_problem(tmp_path / "f") == "is a file, not a folder"
    assert folder_problem(tmp_path / "f" / "x") == f"cannot be created: {tmp_path / 'f'} is a file"
    with pytest.raises(UsageError, match=r"^--out .*/f: is a file, not a folder; give a folder"):
        writable_folder("--out", tmp_path / "f")


def test_a_dangling_link_is_named(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    assert folder_problem(tmp_path / "link") == "is a dangling symbolic link"


def test_an_existing_folder_is_required_where_one_is_read(tmp_path: Path) -> None:
    assert existing_folder("--recipes", tmp_path) == tmp_path
    with pytest.raises(UsageError, match=r"^--recipes .*/nope: does not exist; give"):
        existing_folder("--recipes", tmp_path / "nope")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("loop", "is a symbolic link loop"),
        ("x" * 300, "is too long a path"),
        ("pipe", "is a pipe, not a folder"),
        ("/dev/null", "is a character device, not a folder"),
        ("/proc/infx-results", "cannot be created: /proc is not writable"),
    ],
    ids=["link-loop", "too-long", "pipe", "device", "proc"],
)
def test_a_path_that_cannot_be_a_folder_is_named_for_what_it_is(
    tmp_path: Path, name: str, problem: str
) -> None:
    (tmp_path / "loop").symlink_to("loop")
    os.mkfifo(tmp_path / "pipe")
    path = tmp_path / name
    assert folder_problem(path) == problem
    if not problem.startswith("cannot be created"):
        with pytest.raises(UsageError, match=f"^--recipes {re.escape(str(path))}: {problem}; "):
            existing_folder("--recipes", path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".infx-probe-")]

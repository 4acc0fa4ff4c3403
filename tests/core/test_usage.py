from __future__ import annotations

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

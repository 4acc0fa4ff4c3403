from __future__ import annotations

import multiprocessing
import os
import stat
import time
from pathlib import Path

import pytest

from pytest_infx.files.locks import Timeout, folder_lock, kernel_lock, try_lock


def _hold(folder: Path, marks: Path, name: str) -> None:
    with folder_lock(folder):
        with marks.open("a") as out:
            out.write(f"{name} in\n")
        time.sleep(0.3)
        with marks.open("a") as out:
            out.write(f"{name} out\n")


def test_holders_take_turns_and_leave_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    marks = tmp_path / "marks"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_hold, args=(folder, marks, n)) for n in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
    lines = marks.read_text().splitlines()
    assert len(lines) == 4
    assert [line.split()[1] for line in lines] == ["in", "out", "in", "out"]
    assert lines[0].split()[0] == lines[1].split()[0]
    assert list(folder.iterdir()) == []


def test_a_missing_folder_is_made_to_be_locked(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "golden"
    with folder_lock(folder):
        assert folder.is_dir()
    assert list(folder.iterdir()) == []


def test_a_held_lock_is_refused_until_its_descriptor_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    fd = try_lock(path, 0o600)
    assert fd is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert try_lock(path) is None
    os.close(fd)
    again = try_lock(path)
    assert again is not None
    os.close(again)


def test_a_descriptor_and_a_lock_object_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "b.lock"
    fd = try_lock(path)
    assert fd is not None
    with pytest.raises(Timeout):
        kernel_lock(path, timeout=0).acquire()
    os.close(fd)
    with kernel_lock(path, timeout=0):
        assert try_lock(path) is None
    assert path.exists()

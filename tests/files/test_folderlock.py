from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from pytest_infx.files.folderlock import folder_lock


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

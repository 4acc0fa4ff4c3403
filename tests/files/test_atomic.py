from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from pytest_infx.files.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text


def test_a_write_replaces_the_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.json"
    atomic_write_json(path, {"b": 1, "a": [1, 2]})
    assert json.loads(path.read_text()) == {"a": [1, 2], "b": 1}
    assert path.read_text().startswith('{\n  "a"')
    atomic_write_text(path, "second\n")
    atomic_write_bytes(path, b"third\n", durable=False)
    assert path.read_bytes() == b"third\n"
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    atomic_write_text(path, "old\n")
    with pytest.raises(TypeError):
        atomic_write_json(path, {"x": object()})
    with pytest.raises(TypeError):
        atomic_write_bytes(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]

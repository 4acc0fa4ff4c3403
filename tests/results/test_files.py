from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_infx.results.files import result_path, write_result
from pytest_infx.results.layout import Layout


def test_a_record_s_kind_decides_its_folder(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert result_path(layout, {"id": "a[k1-x]", "kind": "speedbench"}) == layout.cell("a[k1-x]")
    assert result_path(layout, {"id": "a[k1-x]"}) == layout.cell("a[k1-x]")
    assert result_path(layout, {"id": "b[tp1-c2]", "kind": "agentic"}) == layout.point("b[tp1-c2]")


@pytest.mark.parametrize("record", [{}, {"id": ""}, {"id": 3}])
def test_a_record_without_its_item_id_is_refused(tmp_path: Path, record: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="needs its item id as 'id'"):
        write_result(Layout(tmp_path), record)
    assert not any(tmp_path.rglob("*"))


def test_a_written_record_reads_back_whole(tmp_path: Path) -> None:
    record = {"id": "b[tp1-c2]", "kind": "agentic", "verdict": "pass", "reasons": []}
    path = write_result(Layout(tmp_path), record)
    assert path == tmp_path / "agentic" / "b[tp1-c2].json"
    assert json.loads(path.read_text()) == record
    assert [p.name for p in path.parent.iterdir()] == [path.name]

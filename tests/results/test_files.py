from __future__ import annotations

import json
from pathlib import Path

from pytest_infx.kinds import KINDS
from pytest_infx.results.files import result_path, write_result
from pytest_infx.results.layout import Layout
from results.samples import cell, point


def test_a_record_s_kind_decides_its_folder(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert result_path(layout, cell(id="a[k1-x]"), KINDS) == layout.cell("a[k1-x]")
    assert result_path(layout, point(id="b[tp1-c2]"), KINDS) == layout.point("b[tp1-c2]")


def test_a_written_record_reads_back_whole(tmp_path: Path) -> None:
    record = point(id="b[tp1-c2]")
    path = write_result(Layout(tmp_path), record, KINDS)
    assert path == tmp_path / "agentic" / "b[tp1-c2].json"
    assert json.loads(path.read_text()) == record.as_json()
    assert [p.name for p in path.parent.iterdir()] == [path.name]

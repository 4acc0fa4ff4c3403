from __future__ import annotations

import json
from pathlib import Path

from results.samples import CELL, with_fields

from pytest_infx.results.layout import Layout
from pytest_infx.results.records import parse_record
from pytest_infx.speedbench.curves import read_cells


def _cell(recipe: str, k: int, al: object = 1.5, **extra: object) -> dict[str, object]:
    fields = {"id": f"{recipe}[k{k}-thinking_off]", "recipe": recipe, "point.draft_length": k}
    return with_fields(CELL, fields | {"al": al} | extra)


def test_the_matrix_reads_the_recipe_s_own_whole_cells_only(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.cells.mkdir()
    kept = [_cell("a", 1), _cell("a", 2, al=None, kind="speedbench")]
    files = {
        "a[k1-thinking_off]": kept[0],
        "a[k2-thinking_off]": kept[1],
        "a[k3-thinking_off]": _cell("a", 3, al="1.5"),
        "a[k4-thinking_off]": _cell("a", 4, kind="agentic"),
        "a[k5-thinking_off]": _cell("b", 5),
        "ab[k1-thinking_off]": _cell("ab", 1),
        "a[k6-thinking_off]": [],
    }
    for item_id, data in files.items():
        layout.cell(item_id).write_text(json.dumps(data))
    layout.cell("a[k7-thinking_off]").write_text('{"id": ')
    assert read_cells(layout, "a") == [parse_record(data) for data in kept]
    assert read_cells(Layout(tmp_path / "none"), "a") == []

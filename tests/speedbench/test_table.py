from __future__ import annotations

from results.samples import cell

from pytest_infx.speedbench.table import al_tables


def test_one_table_per_recipe_with_a_row_per_draft_length_and_a_column_per_mode() -> None:
    records = [
        cell(
            id="b[k1-thinking_on]", recipe="b", point__draft_length=1, point__thinking="thinking_on"
        ),
        cell(id="a[k2-thinking_off]", recipe="a"),
        cell(id="a[k3-thinking_off]", recipe="a", point__draft_length=3, al=None, verdict="fail"),
        cell(id="a[k2-thinking_on]", recipe="a", point__thinking="thinking_on", golden__ok=False),
    ]
    lines = al_tables(records)
    assert lines[0].startswith("a  (AL;") and lines[4].startswith("b  (AL;")
    assert lines[1].split() == ["k", "thinking_off", "thinking_on"]
    assert lines[2].split() == ["2", "2.08", "2.08*"]
    assert lines[3].split() == ["3", "FAIL", "-"]
    assert al_tables([]) == []

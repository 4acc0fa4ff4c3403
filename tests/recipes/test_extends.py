from __future__ import annotations

from pathlib import Path

from core.helpers import write

from pytest_infx.recipes.extends import deep_merge
from pytest_infx.recipes.source import load_yaml


def test_the_child_wins_mappings_merge_and_lists_are_replaced(tmp_path: Path) -> None:
    base = load_yaml(
        write(tmp_path / "_b.yaml", {"a": 1, "m": {"x": 1, "y": 2}, "l": [1, 2], "only": True})
    )
    child = load_yaml(write(tmp_path / "c.yaml", {"a": 2, "m": {"y": 3, "z": 4}, "l": [9]}))
    merged = deep_merge(base, child)
    assert merged == {"a": 2, "m": {"x": 1, "y": 3, "z": 4}, "l": [9], "only": True}
    assert base == {"a": 1, "m": {"x": 1, "y": 2}, "l": [1, 2], "only": True}


def test_a_merged_value_keeps_the_line_of_the_file_that_wrote_it(tmp_path: Path) -> None:
    base = load_yaml(write(tmp_path / "_b.yaml", {"m": {"x": 1, "y": 2}}))
    child = load_yaml(write(tmp_path / "c.yaml", {"m": {"y": 3}}))
    merged = deep_merge(base, child)["m"]
    assert merged.key_locations["x"].path == tmp_path / "_b.yaml"
    assert merged.key_locations["y"].path == tmp_path / "c.yaml"

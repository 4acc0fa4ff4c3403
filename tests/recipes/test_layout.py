from __future__ import annotations

from pathlib import PurePath

import pytest

from pytest_infx.recipes.layout import is_recipe


@pytest.mark.parametrize(
    ("path", "recipe"),
    [
        ("a.yaml", True),
        ("team/b.yml", True),
        ("_base/b300.yaml", False),
        ("_shared.yaml", False),
        (".hidden/a.yaml", False),
        ("team/.draft.yaml", False),
        ("notes.md", False),
        ("a.json", False),
    ],
)
def test_a_yaml_file_outside_base_and_hidden_parts_is_a_recipe(path: str, recipe: bool) -> None:
    assert is_recipe(PurePath(path)) is recipe

from __future__ import annotations

from pathlib import Path

from core.helpers import dump, line_of, speedbench, write

from pytest_infx.engines.registry import installed
from pytest_infx.recipes.checks import quoted_booleans, recipe_errors
from pytest_infx.recipes.schema import Recipe
from pytest_infx.recipes.source import load_yaml


def _checked(tmp_path: Path, recipe: dict[str, object]) -> tuple[str, list[str]]:
    path = write(tmp_path / "c.yaml", recipe)
    raw = load_yaml(path)
    model = Recipe.model_validate(raw)
    found = [*recipe_errors(raw, model, installed().engine_rules()), *quoted_booleans(raw, model)]
    return dump(recipe), [f"{e.location.line if e.location else '?'} {e.problem}" for e in found]


def test_a_repeated_draft_length_is_an_error_at_its_list(tmp_path: Path) -> None:
    recipe = speedbench("c-b300", draft_lengths=[1, 2, 1])
    text, problems = _checked(tmp_path, recipe)
    key = line_of(text, "draft-lengths")
    assert problems == [f"{key + 3} draft length 1 is listed twice (first at line {key + 1})"]


def test_a_boolean_written_as_a_string_is_an_error_at_its_line(tmp_path: Path) -> None:
    recipe = speedbench("c-b300")
    recipe["engine"]["args"] = {"enforce-eager": "true"}
    text, problems = _checked(tmp_path, recipe)
    assert [p.split(" ", 1)[0] for p in problems] == [str(line_of(text, "enforce-eager"))]


def test_a_clean_recipe_has_no_problem(tmp_path: Path) -> None:
    assert _checked(tmp_path, speedbench("c-b300"))[1] == []

from __future__ import annotations

from pathlib import Path

from pytest_infx.recipes.errors import Location, RecipeError, RecipeErrors


def test_an_error_names_file_line_field_problem_and_hint() -> None:
    error = RecipeError(
        Location(Path("r/a.yaml"), 7), "engine.port", "must be a number", "use 8000"
    )
    assert str(error) == "r/a.yaml:7: engine.port: must be a number\n  hint: use 8000"
    tab = RecipeError(Location(Path("r/a.yaml"), 3, 5), None, "tab in indentation")
    assert str(tab) == "r/a.yaml:3:5: tab in indentation"
    assert str(RecipeError(None, "key", "missing")) == "<recipes>: key: missing"


def test_several_errors_are_reported_together_one_a_line() -> None:
    first = RecipeError(Location(Path("a.yaml"), 1), "key", "missing")
    second = RecipeError(Location(Path("b.yaml"), 2), "tp", "must be positive")
    both = RecipeErrors([first, second])
    assert both.errors == [first, second]
    assert str(both) == "a.yaml:1: key: missing\nb.yaml:2: tp: must be positive"

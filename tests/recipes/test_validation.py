from __future__ import annotations

from pathlib import Path

import pytest
from core.helpers import dump, line_of, speedbench, write
from pydantic import ValidationError

from pytest_infx.recipes.schema import Recipe
from pytest_infx.recipes.source import load_yaml
from pytest_infx.recipes.validation import field_name, locate, validation_errors


def test_each_schema_error_is_at_its_line_with_the_field_as_written(tmp_path: Path) -> None:
    recipe = speedbench("v-b300")
    recipe["engine"]["porrt"] = 1
    recipe["speedbench"]["draft-lengths"] = ["two"]
    path = write(tmp_path / "v.yaml", recipe)
    raw = load_yaml(path)
    with pytest.raises(ValidationError) as info:
        Recipe.model_validate(raw)
    found = {e.field: e for e in validation_errors(raw, info.value)}
    assert set(found) == {"engine.porrt", "speedbench.draft-lengths[0]"}
    typo = found["engine.porrt"]
    assert typo.location is not None and typo.location.line == line_of(dump(recipe), "porrt")
    assert "did you mean 'port'?" in str(typo)


def test_a_location_falls_back_to_the_nearest_written_parent(tmp_path: Path) -> None:
    data = {"engine": {"args": {"x": 1}}}
    path = write(tmp_path / "v.yaml", data)
    raw = load_yaml(path)
    assert locate(raw, ("engine", "args", "missing")).line == line_of(dump(data), "args:")
    assert field_name(("engine", "args", 0)) == "engine.args[0]"

"""``repeats:`` is one field in the three benchmark blocks: the same bad value gets the same
error, at its file and line, whichever block it is written in."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from core.helpers import agentic, changed, dump, line_of, speedbench, write

from pytest_infx.engines.registry import installed
from pytest_infx.recipes.errors import RecipeError, RecipeErrors
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import expand

RULES = installed().engine_rules()


def _fixed() -> dict[str, Any]:
    recipe = copy.deepcopy(dict(agentic("a-b200")))
    del recipe["agentic"]
    recipe["fixed-seq-len"] = {"points": [{"tp": 4, "isl": 1024, "osl": 1024, "concurrency": [4]}]}
    return recipe


BLOCKS = {
    "speedbench": lambda: speedbench("a-b300"),
    "agentic": lambda: agentic("a-b200"),
    "fixed-seq-len": _fixed,
}


def _error(tmp_path: Path, block: str, value: object) -> tuple[str, Path, int]:
    recipe = changed(BLOCKS[block](), f"{block}.repeats", value)
    path = write(tmp_path / f"{block}.yaml", recipe)
    with pytest.raises((RecipeError, RecipeErrors)) as info:
        load_file(path, rules=RULES)
    exc = info.value
    errors = exc.errors if isinstance(exc, RecipeErrors) else [exc]
    [error] = [e for e in errors if isinstance(e, RecipeError) and e.field == f"{block}.repeats"]
    return str(error), path, line_of(dump(recipe), "repeats:")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "greater than or equal to 1"),
        (21, "less than or equal to 20"),
        ("three", "valid integer"),
        (2.5, "valid integer"),
    ],
)
def test_a_bad_repeats_is_the_same_error_at_its_line_in_every_block(
    tmp_path: Path, value: object, expected: str
) -> None:
    shown = {}
    for block in BLOCKS:
        message, path, line = _error(tmp_path, block, value)
        assert message.startswith(f"{path}:{line}: {block}.repeats: ")
        assert expected in message and f"(got {value!r})" in message
        shown[block] = message.split(f"{block}.repeats: ", 1)[1]
    assert len(set(shown.values())) == 1, shown


@pytest.mark.parametrize("block", ["speedbench", "agentic"])
def test_repeats_leave_a_point_s_fingerprint_as_it_was(tmp_path: Path, block: str) -> None:
    once = BLOCKS[block]()
    thrice = changed(once, f"{block}.repeats", 3)
    before = expand(load_file(write(tmp_path / "once" / "a.yaml", once), rules=RULES))
    after = expand(load_file(write(tmp_path / "thrice" / "a.yaml", thrice), rules=RULES))
    assert [p.fingerprint for p in after] == [p.fingerprint for p in before]
    assert after[0].recipe.model_dump(by_alias=True)[block]["repeats"] == 3

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_infx.recipes import source
from pytest_infx.recipes.errors import RecipeError
from pytest_infx.recipes.source import LinedDict, LinedList, load_yaml

PATH = Path("r.yaml")


def error_of(text: str) -> RecipeError:
    with pytest.raises(RecipeError) as info:
        load_yaml(PATH, text)
    return info.value


def test_keys_and_list_items_remember_their_lines() -> None:
    data = load_yaml(PATH, "key: a\n\nengine:\n  args:\n    x: 1\nlist:\n  - 1\n  -\n    y: 2\n")
    assert isinstance(data, LinedDict)
    assert [data.where(k).line for k in ("key", "engine", "list")] == [1, 3, 6]
    assert data["engine"]["args"].where("x").line == 5
    items = data["list"]
    assert isinstance(items, LinedList)
    assert [items.where(0).line, items.where(1).line] == [7, 9]
    assert items.where(5) == items.location
    assert data.where("missing") == data.location


def test_scalars_keep_yaml_types() -> None:
    data = load_yaml(PATH, "a: [1, 2.5, null, true, 'on', x, 2024-01-02]\n")
    assert data == {"a": [1, 2.5, None, True, "on", "x", datetime.date(2024, 1, 2)]}


def test_non_recursive_aliases_are_expanded() -> None:
    data = load_yaml(PATH, "a: &args {x: 1}\nb: *args\n")
    assert data == {"a": {"x": 1}, "b": {"x": 1}}


def test_empty_document_is_none() -> None:
    assert load_yaml(PATH, "") is None


def test_duplicate_key_names_both_lines() -> None:
    error = error_of("a: 1\nb:\n  c: 1\n  c: 2\n")
    assert str(error).startswith("r.yaml:4: c: duplicate key (first written at line 3)")


def test_merge_key_is_refused_with_a_hint() -> None:
    error = error_of("base: &b {x: 1}\nengine:\n  <<: *b\n")
    assert str(error).startswith("r.yaml:3: <<: YAML merge keys are not supported")
    assert "extends" in error.hint


def test_invalid_date_is_a_recipe_error_not_a_traceback() -> None:
    error = error_of("a: 1\nversion: 2024-13-45\n")
    assert str(error).startswith("r.yaml:2: invalid value '2024-13-45'")
    assert "quote" in error.hint


def test_unknown_tag_is_refused() -> None:
    error = error_of("a: 1\nb: !secret x\n")
    assert str(error).startswith("r.yaml:2: unsupported YAML tag !secret")


def test_recursive_alias_is_refused() -> None:
    error = error_of("a: 1\nb: &loop [1, *loop]\n")
    assert str(error).startswith("r.yaml:2: recursive YAML alias")


def test_non_string_key_is_refused() -> None:
    error = error_of("a: 1\n8: x\n")
    assert str(error).startswith("r.yaml:2: 8: keys must be strings")


def test_syntax_error_names_the_line() -> None:
    error = error_of("a: 1\nb: [1, 2\nc: 3\n")
    assert error.location is not None and error.location.line >= 2
    assert "invalid YAML" in str(error)


def test_unreadable_file_is_a_recipe_error(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="cannot read file"):
        load_yaml(tmp_path / "missing.yaml")


def _laughs(levels: int = 7) -> str:
    """A small document of nested aliases that expands to 10**levels strings (10**6 took
    seconds and 10**9 never ended before aliases were counted)."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "key: laughs\n" + "\n".join(lines) + "\n"


def test_nested_aliases_are_refused_before_they_expand(monkeypatch: pytest.MonkeyPatch) -> None:
    """The work is bounded by the value budget, not by the 10**7 strings the aliases stand for:
    the conversion stops after at most MAX_VALUES values, whatever the machine's speed."""
    converted: list[yaml.ScalarNode] = []
    scalar = source._scalar

    def counting(node: yaml.ScalarNode, path: Path) -> Any:
        converted.append(node)
        return scalar(node, path)

    monkeypatch.setattr(source, "_scalar", counting)
    error = error_of(_laughs())
    assert 0 < len(converted) <= source.MAX_VALUES
    assert error.location is not None and error.location.path == PATH
    assert "expands to more than" in error.problem


@pytest.mark.parametrize(
    "text",
    [
        "key: deep\nx: " + "{a: " * 990 + "1" + "}" * 990 + "\n",
        "key: deep\n" + "".join("  " * i + f"k{i}:\n" for i in range(990)) + "  " * 990 + "v: 1\n",
        "key: deep\nx: " + "[" * 990 + "1" + "]" * 990 + "\n",
    ],
    ids=["flow-mapping", "block-mapping", "flow-list"],
)
def test_deep_nesting_is_one_error_at_the_file(text: str) -> None:
    error = error_of(text)
    assert error.location is not None and error.location.path == PATH
    assert "nested more than" in error.problem
    assert len(str(error)) < 300

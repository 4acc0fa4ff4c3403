from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from core.helpers import Recipe, agentic, changed, dump, line_of, speedbench, write

from pytest_infx.recipes.errors import RecipeError, RecipeErrors
from pytest_infx.recipes.loader import load_file, read_tree
from pytest_infx.recipes.points import Cell, Point, expand, expand_all


def points_of(tmp_path: Path, recipe: Recipe | str, name: str = "r.yaml") -> list[Point]:
    return expand(load_file(write(tmp_path / name, recipe)))


def hashes(tmp_path: Path, recipe: Recipe | str, name: str = "r.yaml") -> dict[str, str]:
    return {p.name: p.fingerprint for p in points_of(tmp_path, recipe, name)}


def test_speedbench_points_are_draft_length_by_thinking_mode(tmp_path: Path) -> None:
    points = points_of(tmp_path, speedbench("a-b300", draft_lengths=(3, 1)))
    assert [p.id for p in points] == [
        "a-b300[k1-thinking_off]",
        "a-b300[k1-thinking_on]",
        "a-b300[k3-thinking_off]",
        "a-b300[k3-thinking_on]",
    ]
    assert [(p.draft_length, p.thinking) for p in points] == [
        (1, "thinking_off"),
        (1, "thinking_on"),
        (3, "thinking_off"),
        (3, "thinking_on"),
    ]
    assert {(p.kind, p.tp, p.concurrency, p.runner) for p in points} == {
        ("speedbench", 4, 32, "b300")
    }


def test_draft_lengths_sort_numerically(tmp_path: Path) -> None:
    points = points_of(tmp_path, speedbench("a", draft_lengths=(10, 2), modes=["thinking_on"]))
    assert [p.name for p in points] == ["k2-thinking_on", "k10-thinking_on"]


def test_agentic_points_are_tp_by_concurrency(tmp_path: Path) -> None:
    points = points_of(tmp_path, agentic("a-agentic", points={4: (32, 1, 8), 2: (16,)}))
    assert [p.id for p in points] == [
        "a-agentic[tp2-c16]",
        "a-agentic[tp4-c1]",
        "a-agentic[tp4-c8]",
        "a-agentic[tp4-c32]",
    ]
    assert all(p.kind == "agentic" and p.draft_length is None for p in points)
    assert [(p.tp, p.concurrency) for p in points] == [(2, 16), (4, 1), (4, 8), (4, 32)]


def test_a_recipe_with_both_blocks_lists_speedbench_then_agentic(tmp_path: Path) -> None:
    recipe = speedbench("both", draft_lengths=[2], modes=["thinking_off"])
    recipe["agentic"] = agentic("x", points={8: [4]})["agentic"]
    points = points_of(tmp_path, recipe)
    assert [p.id for p in points] == ["both[k2-thinking_off]", "both[tp8-c4]"]


def test_expansion_is_identical_across_loads(tmp_path: Path) -> None:
    recipe = agentic("a-agentic", points={4: (1, 4, 8), 8: (2, 64), 2: (1,)})
    first = points_of(tmp_path, recipe)
    second = points_of(tmp_path, recipe)
    assert [(p.id, p.fingerprint) for p in first] == [(p.id, p.fingerprint) for p in second]


def extended_tree(tmp_path: Path, overrides: list[dict[str, Any]]) -> list[Point]:
    base = agentic("unused", points={4: (1, 8), 8: (1, 8)})
    del base["key"]
    write(tmp_path / "_base" / "b200.yaml", base)
    child = {"key": "a-agentic", "extends": "_base/b200.yaml", "overrides": overrides}
    write(tmp_path / "a.yaml", child)
    tree = read_tree(tmp_path)
    assert not tree.errors
    return expand_all(tree.sources)


def test_override_on_tp_changes_engine_args_only_for_those_points(tmp_path: Path) -> None:
    overrides = [{"when": {"tp": 8}, "engine": {"args": {"mem-fraction-static": 0.7}}}]
    points = extended_tree(tmp_path, overrides)
    args = {p.name: p.recipe.engine.args for p in points}
    assert (
        args["tp8-c1"]
        == args["tp8-c8"]
        == {
            "mem-fraction-static": 0.7,
            "reasoning-parser": "mimo",
        }
    )
    assert (
        args["tp4-c1"]
        == args["tp4-c8"]
        == {
            "mem-fraction-static": 0.85,
            "reasoning-parser": "mimo",
        }
    )
    plain = {p.name: p.fingerprint for p in extended_tree(tmp_path, [])}
    assert {p.name for p in points if p.fingerprint != plain[p.name]} == {"tp8-c1", "tp8-c8"}


def test_overrides_combine_coordinates_and_later_blocks_win(tmp_path: Path) -> None:
    overrides = [
        {"when": {"tp": 8}, "engine": {"args": {"a": 1, "b": 1}}},
        {"when": {"tp": 8, "concurrency": [8, 64]}, "engine": {"args": {"b": 2}}},
    ]
    points = {p.name: p.recipe.engine.args for p in extended_tree(tmp_path, overrides)}
    assert (points["tp8-c1"]["a"], points["tp8-c1"]["b"]) == (1, 1)
    assert (points["tp8-c8"]["a"], points["tp8-c8"]["b"]) == (1, 2)
    assert "a" not in points["tp4-c8"]


@pytest.mark.parametrize("when", ["thinking_on", "on", True])
def test_override_on_thinking_mode(tmp_path: Path, when: object) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 3))
    recipe["overrides"] = [{"when": {"thinking": when}, "speedbench": {"output-len": 8192}}]
    points = points_of(tmp_path, recipe)
    lengths = {p.name: p.recipe.speedbench.output_len for p in points if p.recipe.speedbench}
    assert lengths == {
        "k1-thinking_off": 4096,
        "k1-thinking_on": 8192,
        "k3-thinking_off": 4096,
        "k3-thinking_on": 8192,
    }


def test_override_on_draft_length_list(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 2, 3), modes=["thinking_off"])
    recipe["overrides"] = [{"when": {"draft-length": [2, 3]}, "engine": {"env": {"X": "1"}}}]
    envs = {p.name: p.recipe.engine.env for p in points_of(tmp_path, recipe)}
    assert envs == {
        "k1-thinking_off": {"VLLM_USE_V1": "1"},
        "k2-thinking_off": {"VLLM_USE_V1": "1", "X": "1"},
        "k3-thinking_off": {"VLLM_USE_V1": "1", "X": "1"},
    }


def test_override_of_speedbench_tp_moves_the_point(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 7), modes=["thinking_off"], tp=4)
    recipe["overrides"] = [{"when": {"draft-length": 7}, "tp": 8}]
    points = {p.name: p for p in points_of(tmp_path, recipe)}
    assert (points["k1-thinking_off"].tp, points["k7-thinking_off"].tp) == (4, 8)
    assert points["k7-thinking_off"].recipe.tp == 8


def test_override_of_speedbench_concurrency_moves_the_point(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 7), modes=["thinking_off"])
    recipe["overrides"] = [{"when": {"draft-length": 7}, "speedbench": {"concurrency": 4}}]
    points = {p.name: p.concurrency for p in points_of(tmp_path, recipe)}
    assert points == {"k1-thinking_off": 32, "k7-thinking_off": 4}


def test_invalid_override_is_reported_only_when_it_applies(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    recipe["overrides"] = [{"when": {"draft-length": 3}, "tp": 0}]
    with pytest.raises(RecipeErrors, match="tp: Input should be greater than or equal to 1"):
        points_of(tmp_path, recipe)
    recipe["overrides"] = [{"when": {"draft-length": 1}, "tp": 0}]
    with pytest.raises(RecipeErrors, match="tp: Input should be greater than or equal to 1"):
        points_of(tmp_path, recipe)


def test_fingerprint_ignores_formatting_comments_and_key_order(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 3, 5))
    plain = hashes(tmp_path, recipe)
    assert plain == hashes(tmp_path, recipe)
    reordered = dict(reversed(list(recipe.items())))
    flow = yaml.safe_dump(reordered, default_flow_style=True, width=60)
    commented = "\n".join(f"{line}  # note" for line in dump(recipe).splitlines())
    assert hashes(tmp_path, flow, "flow.yaml") == plain
    assert hashes(tmp_path, commented, "commented.yaml") == plain
    assert len(set(plain.values())) == len(plain)


def test_fingerprint_is_the_same_through_extends(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    inline = hashes(tmp_path, recipe)
    base = {k: v for k, v in recipe.items() if k not in ("key", "speedbench")}
    write(tmp_path / "_base" / "b.yaml", base)
    child = {"key": "a-b300", "extends": "_base/b.yaml", "speedbench": recipe["speedbench"]}
    assert hashes(tmp_path, child, "child.yaml") == inline


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("engine.args.max-num-batched-tokens", 8192),
        ("engine.args.new-flag", True),
        ("engine.image", "vllm/vllm-openai:v0.32.0@sha256:" + "d2" * 32),
        ("engine.version", "v0.32.0"),
        ("engine.env.VLLM_USE_V1", "0"),
        ("model.hub-id", "XiaomiMiMo/MiMo-V2.6-Flash"),
        ("tp", 8),
        ("speedbench.sampling.temperature", 0.0),
        ("speedbench.sampling.seed", 1),
        ("speedbench.output-len", 1024),
        ("speedbench.concurrency", 16),
        ("speedbench.dataset.category", "math"),
        ("speedbench.dataset.num-prompts", 10),
        ("speedbench.speculative.method", "eagle3"),
        ("speedbench.speculative.block-size", 16),
    ],
)
def test_fingerprint_changes_with_what_affects_the_result(
    tmp_path: Path, dotted: str, value: object
) -> None:
    recipe = speedbench("a-b300")
    before = hashes(tmp_path, recipe)
    after = hashes(tmp_path, changed(recipe, dotted, value))
    assert before.keys() == after.keys()
    assert all(before[name] != after[name] for name in before)


def test_fingerprint_follows_only_the_points_own_chat_template_kwargs(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    before = hashes(tmp_path, recipe)
    kwargs = {"enable_thinking": True, "reasoning_effort": "high"}
    after = hashes(tmp_path, changed(recipe, "speedbench.thinking-modes.thinking_on", kwargs))
    differ = {name for name in before if before[name] != after[name]}
    assert differ == {"k1-thinking_on", "k3-thinking_on"}


def test_fingerprint_ignores_gating_settings(tmp_path: Path) -> None:
    recipe = speedbench("a-b300")
    before = hashes(tmp_path, recipe)
    assert hashes(tmp_path, changed(recipe, "speedbench.golden", "other")) == before
    assert hashes(tmp_path, changed(recipe, "speedbench.tolerance", 0.05)) == before


def test_adding_a_draft_length_or_mode_keeps_the_other_hashes(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 3), modes=["thinking_off"])
    before = hashes(tmp_path, recipe)
    wider = speedbench("a-b300", draft_lengths=(1, 2, 3), modes=["thinking_off", "thinking_on"])
    after = hashes(tmp_path, wider)
    assert len(after) == 6
    assert {name: after[name] for name in before} == before


def test_agentic_fingerprint_per_point(tmp_path: Path) -> None:
    recipe = agentic("a-agentic", points={4: (1, 8), 2: (1, 4)})
    before = hashes(tmp_path, recipe)
    assert len(set(before.values())) == 4
    after = hashes(tmp_path, changed(recipe, "agentic.duration", 900))
    assert all(before[name] != after[name] for name in before)
    threshold = hashes(tmp_path, changed(recipe, "agentic.failed-request-threshold", 0.2))
    assert threshold == before


def test_adding_a_smaller_concurrency_keeps_the_other_hashes(tmp_path: Path) -> None:
    before = hashes(tmp_path, agentic("a-agentic", points={4: (1, 8), 2: (1, 4)}))
    after = hashes(tmp_path, agentic("a-agentic", points={4: (1, 2, 8), 2: (1, 4)}))
    assert set(after) == {*before, "tp4-c2"}
    assert {name: after[name] for name in before} == before


def test_raising_the_top_concurrency_keeps_the_other_points_hashes(tmp_path: Path) -> None:
    before = hashes(tmp_path, agentic("a-agentic", points={4: (1, 8), 2: (1, 4)}))
    after = hashes(tmp_path, agentic("a-agentic", points={4: (1, 8, 64), 2: (1, 4)}))
    assert set(after) == {*before, "tp4-c64"}
    assert {name: after[name] for name in before} == before


def test_override_on_kind_applies_to_one_benchmark_kind_only(tmp_path: Path) -> None:
    recipe = speedbench("a-cpu", draft_lengths=(1,), modes=["thinking_off"])
    recipe["agentic"] = agentic("a-cpu", points={1: [1, 2]})["agentic"]
    recipe["overrides"] = [
        {
            "when": {"kind": "speedbench"},
            "engine": {"args": {"per-request-spec-decode-metrics": "summary"}},
        }
    ]
    args = {p.id: p.recipe.engine.args for p in points_of(tmp_path, recipe)}
    assert args["a-cpu[k1-thinking_off]"].get("per-request-spec-decode-metrics") == "summary"
    assert "per-request-spec-decode-metrics" not in args["a-cpu[tp1-c1]"]
    assert "per-request-spec-decode-metrics" not in args["a-cpu[tp1-c2]"]


def test_override_on_an_unknown_kind_is_an_error_naming_the_kinds_the_points_have(
    tmp_path: Path,
) -> None:
    recipe = speedbench("a-cpu", draft_lengths=(1,), modes=["thinking_off"])
    recipe["overrides"] = [{"when": {"kind": "agentx"}, "tp": 2}]
    with pytest.raises(RecipeErrors) as caught:
        points_of(tmp_path, recipe)
    assert "overrides[0].when: matches no point of this recipe (when {kind: ['agentx']})" in str(
        caught.value
    )
    assert "hint: the points have kind: speedbench; fix the values" in str(caught.value)


def test_override_on_a_kind_that_is_no_name_is_refused_where_it_is_read(tmp_path: Path) -> None:
    recipe = speedbench("a-cpu", draft_lengths=(1,), modes=["thinking_off"])
    recipe["overrides"] = [{"when": {"kind": "agent x"}, "tp": 2}]
    with pytest.raises(RecipeError, match=r"overrides\[0\]\.when\.kind: cannot match .agent x."):
        points_of(tmp_path, recipe)


def test_an_override_that_matches_no_point_is_an_error(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 3))
    recipe["overrides"] = [
        {"when": {"draft-length": 3}, "tp": 8},
        {"when": {"draft-length": 5, "thinking": "thinking_on"}, "tp": 2},
    ]
    path = write(tmp_path / "r.yaml", recipe)
    with pytest.raises(RecipeErrors) as info:
        expand(load_file(path))
    (error,) = info.value.errors
    text = dump(recipe)
    line = text.splitlines().index("- when:", text.splitlines().index("- when:") + 1) + 1
    assert str(error).startswith(f"{path}:{line}: overrides[1].when: matches no point")
    assert "draft-length: [5]" in error.problem and "thinking: ['thinking_on']" in error.problem
    assert error.hint.startswith(
        "the points have draft-length: 1, 3; thinking: thinking_off, thinking_on"
    )


def test_an_override_that_matches_no_agentic_point_lists_what_exists(tmp_path: Path) -> None:
    recipe = agentic("a-agentic", points={4: (8, 16)})
    recipe["overrides"] = [{"when": {"tp": 4, "concurrency": 32}, "duration": 60}]
    with pytest.raises(RecipeErrors) as info:
        points_of(tmp_path, recipe)
    (error,) = info.value.errors
    assert error.field == "overrides[0].when"
    assert error.hint.startswith("the points have tp: 4; concurrency: 8, 16")


def with_arms(key: str) -> Recipe:
    recipe = agentic(key, points={8: (1, 64)})
    recipe["agentic"]["points"].append({"tp": 8, "variant": "hicache", "concurrency": [64, 72]})
    recipe["overrides"] = [
        {"when": {"variant": "hicache"}, "engine": {"args": {"enable-hierarchical-cache": True}}}
    ]
    return recipe


def test_variants_of_one_tp_are_points_of_their_own(tmp_path: Path) -> None:
    points = points_of(tmp_path, with_arms("a-agentic"))
    assert [p.id for p in points] == [
        "a-agentic[tp8-c1]",
        "a-agentic[tp8-c64]",
        "a-agentic[tp8-c64-hicache]",
        "a-agentic[tp8-c72-hicache]",
    ]
    assert [p.variant for p in points] == [None, None, "hicache", "hicache"]
    assert points[2].coordinates() == {
        "kind": "agentic",
        "tp": 8,
        "concurrency": 64,
        "variant": "hicache",
    }


def test_an_override_on_a_variant_changes_only_its_points(tmp_path: Path) -> None:
    points = {p.name: p for p in points_of(tmp_path, with_arms("a-agentic"))}
    assert "enable-hierarchical-cache" in points["tp8-c64-hicache"].recipe.engine.args
    assert "enable-hierarchical-cache" not in points["tp8-c64"].recipe.engine.args
    assert points["tp8-c64-hicache"].fingerprint != points["tp8-c64"].fingerprint


def test_an_override_on_an_unknown_variant_names_the_variants_there_are(tmp_path: Path) -> None:
    recipe = with_arms("a-agentic")
    recipe["overrides"][0]["when"] = {"variant": "hicahce"}
    with pytest.raises(RecipeErrors) as info:
        points_of(tmp_path, recipe)
    (error,) = info.value.errors
    assert "matches no point" in error.problem
    assert "variant: hicache" in error.hint


def test_docs_are_prose_and_change_no_fingerprint(tmp_path: Path) -> None:
    recipe = agentic("a-agentic", points={4: (1, 8)})
    before = hashes(tmp_path, recipe)
    recipe["docs"] = "Serves on a free port when 8888 is taken, where the script fails."
    points = points_of(tmp_path, recipe, "b.yaml")
    assert points[0].recipe.docs == recipe["docs"]
    assert {p.name: p.fingerprint for p in points} == before


def test_a_point_reaches_the_settings_of_its_own_kind(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(3,))
    recipe["agentic"] = agentic("a-b300")["agentic"]
    points = points_of(tmp_path, recipe)
    cells = [p for p in points if p.kind == "speedbench"]
    arms = [p for p in points if p.kind == "agentic"]
    assert [(p.cell, p.agentic) for p in cells] == [
        (Cell(p.recipe.speedbench, 3, mode), None)  # type: ignore[arg-type]
        for p, mode in zip(cells, ("thinking_off", "thinking_on"), strict=True)
    ]
    assert arms and all(p.agentic is p.recipe.agentic and p.cell is None for p in arms)
    assert all(p.block is p.agentic for p in arms)


def test_an_override_that_removes_the_block_of_its_points_names_its_line(tmp_path: Path) -> None:
    recipe = speedbench("a-b300", draft_lengths=(1, 3))
    recipe["agentic"] = agentic("a-b300")["agentic"]
    recipe["overrides"] = [{"when": {"draft-length": [3]}, "speedbench": None}]
    text = dump(recipe)
    with pytest.raises(RecipeErrors) as info:
        points_of(tmp_path, text)
    assert [(e.location.line if e.location else None, e.field) for e in info.value.errors] == [
        (line_of(text, "speedbench: null"), "overrides[0].speedbench")
    ]
    assert "removes the speedbench block" in str(info.value)


def test_a_point_whose_recipe_was_replaced_without_its_block_says_so(tmp_path: Path) -> None:
    point = points_of(tmp_path, speedbench("a-b300", draft_lengths=(1,)))[0]
    emptied = replace(point, recipe=point.recipe.model_copy(update={"speedbench": None}))
    with pytest.raises(
        ValueError, match=r"a-b300\[k1-thinking_off\]: its recipe has no speedbench"
    ):
        assert emptied.cell is None


def _fixed(key: str = "a-fixed") -> Recipe:
    recipe = agentic(key, points={})
    del recipe["agentic"]
    recipe["fixed-seq-len"] = {
        "points": [
            {"tp": 8, "isl": 1024, "osl": 1024, "concurrency": [64, 4]},
            {"tp": 8, "isl": 8192, "osl": 1024, "concurrency": [4]},
            {"tp": 4, "isl": 1024, "osl": 1024, "concurrency": [4], "variant": "ep4-dpa"},
        ]
    }
    return recipe


def test_fixed_seq_len_points_are_tp_by_lengths_by_concurrency(tmp_path: Path) -> None:
    points = points_of(tmp_path, _fixed())
    assert [p.name for p in points] == [
        "tp4-isl1024-osl1024-c4-ep4-dpa",
        "tp8-isl1024-osl1024-c4",
        "tp8-isl1024-osl1024-c64",
        "tp8-isl8192-osl1024-c4",
    ]
    assert all(p.kind == "fixed_seq_len" and p.fixed_seq_len is not None for p in points)
    assert (points[3].isl, points[3].osl, points[0].variant) == (8192, 1024, "ep4-dpa")
    assert points[3].coordinates() == {
        "kind": "fixed_seq_len", "tp": 8, "concurrency": 4, "isl": 8192, "osl": 1024
    }  # fmt: skip
    assert len({p.fingerprint for p in points}) == 4


def test_an_override_on_the_lengths_changes_only_those_points(tmp_path: Path) -> None:
    recipe = _fixed()
    recipe["overrides"] = [
        {"when": {"isl": 8192}, "engine": {"args": {"max-model-len": 10240}}},
        {"when": {"kind": "fixed_seq_len", "osl": [1024]}, "fixed-seq-len": {"seed": 7}},
    ]
    found = {p.name: p for p in points_of(tmp_path, recipe)}
    assert found["tp8-isl8192-osl1024-c4"].recipe.engine.args["max-model-len"] == 10240
    assert "max-model-len" not in found["tp8-isl1024-osl1024-c4"].recipe.engine.args
    assert {p.fixed_seq_len.seed for p in found.values() if p.fixed_seq_len} == {7}


def test_a_fixed_seq_len_timeout_is_no_part_of_the_fingerprint(tmp_path: Path) -> None:
    before = hashes(tmp_path, _fixed())
    waited = _fixed()
    waited["fixed-seq-len"]["request-timeout"] = 60.0
    assert hashes(tmp_path, waited) == before
    seeded = _fixed()
    seeded["fixed-seq-len"]["seed"] = 1
    assert set(hashes(tmp_path, seeded).values()).isdisjoint(before.values())


def test_kept_alive_connections_change_the_fingerprint_and_the_default_does_not(
    tmp_path: Path,
) -> None:
    before = hashes(tmp_path, _fixed())
    default = _fixed()
    default["fixed-seq-len"]["connections"] = "per-request"
    assert hashes(tmp_path, default) == before
    kept = _fixed()
    kept["fixed-seq-len"]["connections"] = "kept-alive"
    changed = hashes(tmp_path, kept)
    assert set(changed.values()).isdisjoint(before.values())
    assert {p.fixed_seq_len.connections for p in points_of(tmp_path, kept) if p.fixed_seq_len} == {
        "kept-alive"
    }


def test_a_prompt_worker_count_other_than_eight_changes_the_fingerprint(tmp_path: Path) -> None:
    before = hashes(tmp_path, _fixed())
    default = _fixed()
    default["fixed-seq-len"]["prompt-workers"] = 8
    assert hashes(tmp_path, default) == before
    serial = _fixed()
    serial["fixed-seq-len"]["prompt-workers"] = 1
    assert set(hashes(tmp_path, serial).values()).isdisjoint(before.values())
    auto = _fixed()
    auto["fixed-seq-len"]["prompt-workers"] = 0
    assert {
        p.fixed_seq_len.prompt_workers for p in points_of(tmp_path, auto) if p.fixed_seq_len
    } == {0}


@pytest.mark.parametrize("setting", [True, "deepseek-v4"])
def test_a_chat_template_changes_the_fingerprint_and_off_leaves_it(
    tmp_path: Path, setting: object
) -> None:
    before = hashes(tmp_path, _fixed())
    off = _fixed()
    off["fixed-seq-len"]["chat-template"] = False
    assert hashes(tmp_path, off) == before
    on = _fixed()
    on["fixed-seq-len"]["chat-template"] = setting
    assert set(hashes(tmp_path, on).values()).isdisjoint(before.values())

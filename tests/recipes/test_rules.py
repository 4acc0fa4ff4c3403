from __future__ import annotations

from pathlib import Path

import pytest
from lint.helpers import DFLASH_RECIPE, line_of, write_files

from pytest_infx.recipes.errors import RecipeErrors
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import expand
from pytest_infx.recipes.rules import check_cell, check_point, point_raw, thinking_switch


def _source(tmp_path: Path, text: str) -> Path:
    write_files(tmp_path, {"recipes/x.yaml": text})
    return tmp_path / "recipes" / "x.yaml"


def _with_model(prefix: str, hub_id: str, on: str, off: str) -> str:
    return (
        DFLASH_RECIPE.replace("prefix: mimov2.6flash", f"prefix: {prefix}")
        .replace("hub-id: XiaomiMiMo/MiMo-V2.6-Flash-RL", f"hub-id: {hub_id}")
        .replace("thinking_on: {enable_thinking: true}", f"thinking_on: {on}")
        .replace("thinking_off: {enable_thinking: false}", f"thinking_off: {off}")
    )


@pytest.mark.parametrize(
    ("prefix", "hub_id", "on", "off", "expected"),
    [
        ("dsv4", "deepseek-ai/DeepSeek-V4-Pro", "{thinking: true}", "{thinking: false}", []),
        (
            "dsv4",
            "deepseek-ai/DeepSeek-V4-Pro",
            "{enable_thinking: true}",
            "{thinking: false}",
            [
                'thinking_on: {"enable_thinking": true} does not turn thinking on for deepseek'
                ' models; use {"thinking": true}'
            ],
        ),
        ("kimik3", "moonshotai/Kimi-K3", "{thinking: true}", "{}", []),
        (
            "minimaxm3",
            "MiniMaxAI/MiniMax-M3",
            "{thinking_mode: enabled}",
            "{thinking_mode: disabled}",
            [],
        ),
        (
            "minimaxm3",
            "MiniMaxAI/MiniMax-M3",
            "{thinking_mode: disabled}",
            "{thinking_mode: enabled}",
            [
                'thinking_on: {"thinking_mode": "disabled"} does not turn thinking on for'
                ' minimax-m3 models; use {"thinking_mode": "enabled"}',
                'thinking_off: {"thinking_mode": "enabled"} turns thinking on for minimax-m3'
                ' models; use {"thinking_mode": "disabled"}',
            ],
        ),
        ("qwen3.5", "Qwen/Qwen3.5-397B-A17B", "{enable_thinking: true}", "{}", []),
        (
            "smollm2",
            "HuggingFaceTB/SmolLM2-135M-Instruct",
            "{enable_thinking: 'true'}",
            "{}",
            [
                'thinking_on: {"enable_thinking": "true"} does not turn thinking on for smollm2'
                ' models; use {"enable_thinking": true}'
            ],
        ),
        ("gptoss", "openai/gpt-oss-120b", "{thinking: true}", "{}", []),
        (
            "gptoss",
            "openai/gpt-oss-120b",
            "{reasoning_effort: high}",
            "{thinking: true}",
            [
                'thinking_on: {"reasoning_effort": "high"} does not turn thinking on for model'
                " openai/gpt-oss-120b (family unknown, so any known switch counts); use one of"
                ' {"enable_thinking": true}, {"thinking": true}, {"thinking_mode": "enabled"}',
                'thinking_off: {"thinking": true} turns thinking on for model openai/gpt-oss-120b;'
                ' use {"enable_thinking": false}',
            ],
        ),
    ],
)
def test_thinking_kwargs_by_family(
    tmp_path: Path, prefix: str, hub_id: str, on: str, off: str, expected: list[str]
) -> None:
    source = load_file(_source(tmp_path, _with_model(prefix, hub_id, on, off)))
    found = [
        str(problem).split("thinking-modes.", 1)[1]
        for mode in ("thinking_on", "thinking_off")
        for problem in check_cell(
            source.recipe, draft_length=1, thinking=mode, path=source.path, raw=source.raw
        )
    ]
    assert found == expected


def test_family_from_the_hub_id_when_the_prefix_is_unusual(tmp_path: Path) -> None:
    source = load_file(
        _source(tmp_path, _with_model("m26", "XiaomiMiMo/MiMo-V2.6-Flash-RL", "{}", "{}"))
    )
    switch = thinking_switch(source.recipe)
    assert switch is not None and switch.family == "mimo"


def test_check_point_names_the_point_line_without_raw_and_the_field_with_it(
    tmp_path: Path,
) -> None:
    text = DFLASH_RECIPE.replace("[1, 2, 3, 4, 5, 6, 7]", "[6, 7, 8]")
    source = load_file(_source(tmp_path, text))
    points = {point.name: point for point in expand(source)}
    assert check_point(points["k7-thinking_on"]) == []
    bare = check_point(points["k8-thinking_on"])
    assert [(p.check, p.line, p.field) for p in bare] == [
        ("draft-length", source.location.line, "speedbench.draft-lengths[2]")
    ]
    located = check_point(
        points["k8-thinking_off"], raw=point_raw(source, points["k8-thinking_off"])
    )
    assert str(located[0]) == (
        f"{source.path}:{line_of(text, 'draft-lengths')}: speedbench.draft-lengths[2]: draft"
        " length 8 is not valid for dflash with block size 8: it drafts 1 to 7 tokens; use draft"
        " lengths 1 to 7"
    )


def test_check_point_uses_the_point_s_override(tmp_path: Path) -> None:
    text = DFLASH_RECIPE + (
        "overrides:\n"
        "  - when: {thinking: on, draft-length: 2}\n"
        "    speedbench:\n"
        "      thinking-modes:\n"
        "        thinking_on: {enable_thinking: false}\n"
    )
    source = load_file(_source(tmp_path, text))
    points = {point.name: point for point in expand(source)}
    assert check_point(points["k1-thinking_on"]) == []
    assert check_point(points["k2-thinking_off"]) == []
    point = points["k2-thinking_on"]
    problems = check_point(point, raw=point_raw(source, point))
    assert [(p.check, p.line) for p in problems] == [
        ("thinking", line_of(text, "thinking_on: {enable_thinking: false}"))
    ]


def test_a_draft_length_below_one(tmp_path: Path) -> None:
    text = DFLASH_RECIPE.replace("[1, 2, 3, 4, 5, 6, 7]", "[0, 1]")
    with pytest.raises(RecipeErrors, match=r"draft-lengths\[0\]: .*greater than or equal to 1"):
        load_file(_source(tmp_path, text))
    source = load_file(_source(tmp_path, DFLASH_RECIPE))
    found = check_cell(source.recipe, draft_length=0, thinking=None, path=source.path)
    assert [str(p) for p in found] == [
        f"{source.path}: speedbench.draft-lengths: draft length 0 must be at least 1;"
        " use draft lengths of 1 or more"
    ]

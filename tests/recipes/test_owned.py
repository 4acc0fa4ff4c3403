"""Owned flags are recognised the way the engines' ``argparse`` parsers resolve a name: prefixes
(``allow_abbrev``), ``name=value``, dashes or underscores, spaces, leading or doubled dashes,
JSON sub-keys; in load, lint and ``--infx-plan`` alike, at the recipe line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from known_recipes import copy_recipes

from pytest_infx.engines.registry import installed
from pytest_infx.recipes.errors import RecipeErrors
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.owned import EngineRules, canonical, owner, spellings

REPO = Path(__file__).resolve().parents[2]


DFLASH = "mimov2.6flash-fp4-b300-vllm-dflash.yaml"
SGLANG = "mimov2.6flash-fp4-b200-sglang-agentic.yaml"

OWNED = [
    "host=0.0.0.0",
    "tensor-parallel-size=8",
    "port=9000",
    "served-model",
    "tensor-parallel",
    "speculative-config.num_speculative_tokens",
    "host ",
    " port",
    "----host",
    "served--model--name",
    "SERVED_MODEL_NAME",
]
RULES = installed().engine_rules()


def owned(name: str, engine: str = "vllm", *, agentic: bool = False) -> str | None:
    return owner(name, RULES.tables(engine, agentic=agentic))


@pytest.mark.parametrize("name", OWNED)
def test_every_spelling_of_an_owned_flag_has_its_owner(name: str) -> None:
    assert owned(name) is not None
    if not name.startswith("speculative"):
        assert owned(name, "sglang") is not None


def test_a_flag_is_owned_only_by_the_engine_whose_parser_takes_it() -> None:
    assert owned("tp_size", "sglang") is not None
    assert owned("tp_size", "vllm") is None
    assert owned("speculative-config.method", "vllm") is not None
    assert owned("speculative-config.method", "sglang") is None


@pytest.mark.parametrize(
    "name", ["max-model-len", "max_model_len=4096", "reasoning-parser", "enable-auto-tool-choice"]
)
def test_other_flags_are_the_recipe_s(name: str) -> None:
    assert owned(name) is None
    assert owned(name, "sglang") is None


def test_admission_flags_are_owned_only_in_agentic_recipes() -> None:
    assert owned("cuda-graph-max-bs", "sglang") is None
    assert owned("cuda-graph-max-bs", "sglang", agentic=True) is not None
    assert owned("cuda_graph_max_bs_decode", "sglang", agentic=True) is not None
    assert owned("max-running", "sglang", agentic=True) is not None
    assert owned("max-num-seqs", "vllm", agentic=True) is not None


def test_an_engine_without_rules_owns_nothing() -> None:
    assert owner("port", EngineRules().tables("vllm", agentic=True)) is None


def test_canonical_and_spellings() -> None:
    assert canonical("  --Speculative_Config.method=x ") == "speculative-config"
    assert spellings(["max-model-len", "max_model_len", "dtype"]) == {
        "max-model-len": ["max-model-len", "max_model_len"]
    }


def planted(tmp_path: Path, recipe: str, *lines: str) -> tuple[Path, str]:
    root = tmp_path / "recipes"
    copy_recipes(root)
    path = root / recipe
    text = path.read_text().replace("  args:\n", "  args:\n" + "".join(f"{x}\n" for x in lines))
    path.write_text(text)
    return path, text


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "entry",
    [
        '    "host=0.0.0.0": true',
        '    "tensor-parallel-size=8": true',
        '    "port=9000": true',
        "    served-model: x",
        "    tensor-parallel: 8",
        "    speculative-config.num_speculative_tokens: 2",
        '    "host ": 0.0.0.0',
        '    "----port": 9000',
    ],
)
def test_load_refuses_each_at_its_line(tmp_path: Path, entry: str) -> None:
    path, text = planted(tmp_path, DFLASH, entry)
    with pytest.raises(RecipeErrors) as info:
        load_file(path, rules=RULES)
    (error,) = info.value.errors
    assert error.location is not None
    assert error.location.line == line_of(text, entry.strip())
    assert "pytest-infx sets this flag itself" in error.problem


def test_two_spellings_of_one_flag_are_one_error(tmp_path: Path) -> None:
    path, text = planted(tmp_path, DFLASH, "    max-model-len: 2048", "    max_model_len: 4096")
    with pytest.raises(RecipeErrors) as info:
        load_file(path, rules=RULES)
    (error,) = info.value.errors
    assert error.location is not None
    assert error.location.line == line_of(text, "max_model_len: 4096")
    assert "names the flag --max-model-len again (first as 'max-model-len')" in error.problem


def test_two_spellings_of_an_owned_flag_are_one_error(tmp_path: Path) -> None:
    path, text = planted(tmp_path, DFLASH, '    "host=0.0.0.0": true', "    Host: 0.0.0.0")
    with pytest.raises(RecipeErrors) as info:
        load_file(path, rules=RULES)
    (error,) = info.value.errors
    assert error.location is not None
    assert error.location.line == line_of(text, "host=0.0.0.0")


def test_the_old_cuda_graph_spelling_is_owned_in_an_agentic_recipe(tmp_path: Path) -> None:
    path, text = planted(tmp_path, SGLANG, "    cuda-graph-max-bs: 64")
    with pytest.raises(RecipeErrors) as info:
        load_file(path, rules=RULES)
    (error,) = info.value.errors
    assert error.location is not None
    assert error.location.line == line_of(text, "cuda-graph-max-bs: 64")
    assert "admission-factor" in error.problem


def test_lint_and_the_plan_report_it_at_the_line(tmp_path: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    shutil.copytree(REPO / "golden", pytester.path / "golden")
    path, text = planted(pytester.path, DFLASH, '    "host=0.0.0.0": true')
    line = line_of(text, "host=0.0.0.0")
    plan = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", "b300")
    plan.stdout.fnmatch_lines([f"*{DFLASH}:{line}*engine.args.host=0.0.0.0*sets this flag*"])
    assert "0.0.0.0" not in "".join(x for x in plan.outlines if "argv:" in x)
    lint = pytester.runpytest("-m", "lint", "-q", "-k", "recipes-load")
    lint.stdout.fnmatch_lines([f"*{DFLASH}:{line}*engine.args.host=0.0.0.0*sets this flag*"])
    assert path.is_file()

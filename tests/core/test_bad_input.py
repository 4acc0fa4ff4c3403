"""One bad input file is an error at that file, and every other recipe still collects."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .helpers import agentic, speedbench, write

LAUGHS = (
    "key: laughs\na0: &a0 ["
    + ", ".join(["lol"] * 10)
    + "]\n"
    + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))
)
DEEP = "key: deep\nx: " + "{a: " * 990 + "1" + "}" * 990 + "\n"


def _good_items(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


@pytest.mark.parametrize("text", [LAUGHS, DEEP], ids=["billion-laughs", "deep-nesting"])
def test_hostile_yaml_is_one_error_at_its_file_and_the_others_collect(
    recipes: Path, pytester: pytest.Pytester, text: str
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    bad = write(recipes / "hostile.yaml", text)
    start = time.monotonic()
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--gpu", "b300", timeout=60)
    assert time.monotonic() - start < 10
    out = result.stdout.str()
    assert "Traceback" not in out and "RecursionError" not in out
    assert out.count(f"{bad}:") == 1
    assert len(out) < 5000
    assert _good_items(result) == [
        "recipes/good.yaml::good-b300[k1-thinking_off]",
        "recipes/good.yaml::good-b300[k1-thinking_on]",
    ]


def _overflowing(recipes: Path) -> Path:
    write(recipes / "good.yaml", agentic("good-b200", points={4: (1,)}))
    recipe = agentic("bad-b200", points={4: (1, 32)})
    recipe["agentic"]["admission-factor"] = 1.0e308
    return write(recipes / "bad.yaml", recipe)


def test_a_value_that_overflows_is_an_error_in_its_file_alone(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    bad = _overflowing(recipes)
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b200")
    result.stdout.fnmatch_lines([f"{bad}:*: agentic.admission-factor: *less than or equal to*"])
    assert "OverflowError" not in result.stdout.str()
    assert _good_items(result) == ["recipes/good.yaml::good-b200[tp4-c1]"]


def test_a_value_that_overflows_fails_lint(recipes: Path, pytester: pytest.Pytester) -> None:
    bad = _overflowing(recipes)
    result = pytester.runpytest("-m", "infx_lint", "-k", "recipes-load")
    result.assert_outcomes(failed=1, deselected=20)
    result.stdout.fnmatch_lines([f"*{bad.name}:*admission-factor*"])


def test_under_xdist_a_recipe_error_is_reported_while_the_others_run(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    _overflowing(recipes)
    result = pytester.runpytest_subprocess("-n", "2", "--gpu", "h100", timeout=120)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*bad.yaml:*: agentic.admission-factor: *", "ERROR recipes/bad.yaml*"]
    )
    assert "ERROR recipes/good.yaml" not in result.stdout.str()

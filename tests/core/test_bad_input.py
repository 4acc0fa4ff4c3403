"""One bad input file is an error at that file, and every other recipe still collects."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .helpers import speedbench, write

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

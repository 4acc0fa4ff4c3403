"""``--infx-engine-check`` / ``infx_engine_check``: a bad value is a usage error before anything
runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


KNOWN_RECIPES = (
    "_base",
    "mimov2.6flash-fp4-b200-sglang-agentic.yaml",
    "mimov2.6flash-fp4-b200-vllm-agentic.yaml",
    "mimov2.6flash-fp4-b300-vllm-dflash.yaml",
    "smollm2-bf16-cpu-vllm-draft.yaml",
    "smollm2-bf16-cpu-vllm-ngram.yaml",
)
"""The repository's recipes these tests were written against; recipes added later are left out
of the copies so the counts below stay what they are."""


def copy_recipes(to: Path) -> None:
    def ignore(folder: str, names: list[str]) -> list[str]:
        top = Path(folder) == REPO / "recipes"
        return [name for name in names if top and name not in KNOWN_RECIPES]

    shutil.copytree(REPO / "recipes", to, ignore=ignore)


def test_a_bad_ini_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\ninfx_engine_check = perhaps\n")
    copy_recipes(pytester.path / "recipes")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--gpu", "b300")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: infx_engine_check = 'perhaps': use one of auto, always, off"]
    )


def test_a_bad_option_value_is_refused_by_the_parser(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    result = pytester.runpytest_subprocess("--collect-only", "--infx-engine-check", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--infx-engine-check: invalid choice: 'sometimes'*"])

"""``--infx-engine-check`` / ``infx_engine_check``: a bad value is a usage error before anything
runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from known_recipes import copy_recipes

REPO = Path(__file__).resolve().parents[2]


def test_a_bad_ini_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\ninfx_engine_check = perhaps\n")
    copy_recipes(pytester.path / "recipes")
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: infx_engine_check = 'perhaps': use one of auto, always, off"]
    )


def test_a_bad_option_value_is_refused_by_the_parser(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    result = pytester.runpytest("--collect-only", "--infx-engine-check", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--infx-engine-check: invalid choice: 'sometimes'*"])

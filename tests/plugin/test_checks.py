from __future__ import annotations

import pytest

INI = "[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n"


def test_a_folder_option_that_moved_the_rootdir_is_one_usage_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI)
    outside = pytester.path.parent / "elsewhere"
    outside.mkdir()
    result = pytester.runpytest("--collect-only", "-q", "--infx-results", str(outside))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR: ")]
    assert errors == [
        f"ERROR: --infx-results {outside}: pytest took this folder for a test path before"
        f" pytest-infx was loaded, and would run from {pytester.path.parent} without the ini"
        f" file of {pytester.path}; write --infx-results={outside}"
    ]
    joined = pytester.runpytest("--collect-only", "-q", f"--infx-results={outside}")
    assert joined.ret == pytest.ExitCode.NO_TESTS_COLLECTED

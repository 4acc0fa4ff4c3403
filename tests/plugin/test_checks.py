from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize("form", ["space", "equals"])
def test_a_folder_option_inside_the_project_works_in_either_form(
    pytester: pytest.Pytester, form: str
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    inside: Path = pytester.mkdir("out")
    args = ["--infx-results", str(inside)] if form == "space" else [f"--infx-results={inside}"]
    result = pytester.runpytest("-q", "test_one.py", *args)
    assert result.ret == pytest.ExitCode.OK

from __future__ import annotations

from pathlib import Path

import pytest
from core.helpers import agentic, speedbench, write

MARKED = """
import pytest

@pytest.mark.speedbench
def test_speed():
    pass

@pytest.mark.agentic
def test_agentic():
    pass

@pytest.mark.lint
def test_lint():
    pass
"""


def test_markers_are_listed(recipes: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    assert result.ret == 0
    result.stdout.fnmatch_lines_random(
        ["@pytest.mark.speedbench: *", "@pytest.mark.agentic: *", "@pytest.mark.lint: *"]
    )


@pytest.mark.parametrize("marker", ["speedbench", "agentic", "lint"])
def test_markers_pass_strict_markers(recipes: Path, pytester: pytest.Pytester, marker: str) -> None:
    pytester.makepyfile(test_marked=MARKED)
    result = pytester.runpytest("--strict-markers", "-m", marker, "test_marked.py")
    result.assert_outcomes(passed=1, deselected=2)


def test_strict_markers_still_rejects_unknown_markers(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(test_marked=MARKED.replace("mark.lint", "mark.lnit"))
    result = pytester.runpytest("--strict-markers", "test_marked.py")
    result.stdout.fnmatch_lines(["*'lnit' not found in `markers` configuration option*"])


def test_recipe_items_carry_their_kind_marker_under_strict_markers(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "s.yaml", speedbench("s-b200", runner="b200", draft_lengths=[1]))
    write(recipes / "a.yaml", agentic("a-b200-agentic", runner="b200", points={4: (1, 2)}))
    args = ("--collect-only", "-q", "--strict-markers", "--gpu", "b200")
    speed = pytester.runpytest(*args, "-m", "speedbench")
    assert [n for n in speed.outlines if "::" in n] == [
        "recipes/s.yaml::s-b200[k1-thinking_off]",
        "recipes/s.yaml::s-b200[k1-thinking_on]",
    ]
    agent = pytester.runpytest(*args, "-m", "agentic")
    assert [n for n in agent.outlines if "::" in n] == [
        "recipes/a.yaml::a-b200-agentic[tp4-c1]",
        "recipes/a.yaml::a-b200-agentic[tp4-c2]",
    ]

"""pytest-infx installed into someone else's repository: their tests run as without it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from core.helpers import speedbench, write

GC_PROBE = """
import gc

def test_sees_the_collector_as_python_left_it():
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
"""


def test_a_host_test_sees_the_garbage_collector_on_and_unfrozen(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "s.yaml", speedbench("s-b300", draft_lengths=[1, 2]))
    pytester.makepyfile(test_host=GC_PROBE)
    result = pytester.runpytest_subprocess("--gpu", "b300", "-p", "no:randomly", "test_host.py")
    result.assert_outcomes(passed=1)
    everything = pytester.runpytest_subprocess("--gpu", "b300", "-k", "host")
    everything.assert_outcomes(passed=1, deselected=4)


def test_an_in_process_run_gives_the_collector_back(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    """A host test that runs pytest in its own process (pytester's inline runs) keeps its
    collector as it was, even after a collect-only run, where the plugin freezes what it
    collected until pytest's own closing collection is done."""
    write(recipes / "s.yaml", speedbench("s-b300", draft_lengths=[1, 2]))
    assert gc.get_freeze_count() == 0
    result = pytester.runpytest_inprocess("--collect-only", "-q", "--gpu", "b300")
    assert result.ret == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


OWN_LINT_TEST = """
import pytest

@pytest.mark.lint
def test_own_lint():
    pass

def test_unrelated():
    pass
"""


def _lint_ids(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("infx-lint::")]


def test_a_hosts_own_lint_tests_run_with_m_lint(recipes: Path, pytester: pytest.Pytester) -> None:
    write(recipes / "s.yaml", speedbench("s-b300", draft_lengths=[1]))
    pytester.makepyfile(test_host=OWN_LINT_TEST)
    listed = pytester.runpytest("--collect-only", "-q", "-m", "lint")
    assert "test_host.py::test_own_lint" in listed.outlines
    assert _lint_ids(listed)
    assert not [line for line in listed.outlines if "s-b300" in line or "unrelated" in line]
    ran = pytester.runpytest("-m", "lint", "-k", "own_lint", "-v")
    ran.stdout.fnmatch_lines(["test_host.py::test_own_lint PASSED*"])


def test_a_host_option_named_gpu_stays_the_hosts(recipes: Path, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            parser.addoption("--gpu", action="store_true", help="the host's own GPU switch")
        """
    )
    pytester.makepyfile(
        test_host="def test_gpu_flag(request):\n    assert request.config.getoption('--gpu')\n"
    )
    write(recipes / "s.yaml", speedbench("s-b200", runner="b200", draft_lengths=[1]))
    write(recipes / "t.yaml", speedbench("t-b300", draft_lengths=[1]))
    host = pytester.runpytest("--gpu", "test_host.py")
    host.assert_outcomes(passed=1)
    host.stdout.fnmatch_lines(
        ["infx: --gpu is another plugin's or conftest's option here; pytest-infx's is --infx-gpu"]
    )
    ours = pytester.runpytest("--collect-only", "-q", "--infx-gpu", "b200", "recipes")
    assert [line for line in ours.outlines if "::" in line] == [
        "recipes/s.yaml::s-b200[k1-thinking_off]",
        "recipes/s.yaml::s-b200[k1-thinking_on]",
    ]


def test_a_host_option_with_a_value_named_changed_since_stays_the_hosts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            group = parser.getgroup("host", "the host's options")
            group.addoption("--changed-since", dest="host_since", help="the host's own")
        """
    )
    pytester.makepyfile(
        test_host=(
            "def test_since(request):\n"
            "    assert request.config.getoption('host_since') == 'v1'\n"
            "    assert request.config.getoption('infx_changed_since') is None\n"
        )
    )
    host = pytester.runpytest("--changed-since", "v1", "test_host.py")
    host.assert_outcomes(passed=1)
    host.stdout.fnmatch_lines(
        [
            "infx: --changed-since is another plugin's or conftest's option here; "
            "pytest-infx's is --infx-changed-since"
        ]
    )


def test_the_short_names_work_where_nobody_else_has_them(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "s.yaml", speedbench("s-b200", runner="b200", draft_lengths=[1]))
    write(recipes / "t.yaml", speedbench("t-b300", draft_lengths=[1]))
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    assert [line for line in result.outlines if "::" in line] == [
        "recipes/t.yaml::t-b300[k1-thinking_off]",
        "recipes/t.yaml::t-b300[k1-thinking_on]",
    ]
    assert "infx:" not in result.stdout.str()


def test_a_host_lint_marker_combines_with_the_rules(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n"
        "markers =\n    lint: the host's own checks\n"
    )
    pytester.makepyfile(test_host=OWN_LINT_TEST)
    markers = pytester.runpytest("--markers")
    assert markers.stdout.str().count("@pytest.mark.lint:") == 1
    markers.stdout.fnmatch_lines(["@pytest.mark.lint: the host's own checks"])
    header = pytester.runpytest("--collect-only", "--strict-markers", "-m", "lint")
    header.stdout.fnmatch_lines(
        [
            "infx: marker 'lint' is also this repository's: -m lint selects its lint-marked "
            "tests and pytest-infx's lint rules (-m infx_lint: the rules alone)"
        ]
    )
    both = pytester.runpytest("--collect-only", "-q", "--strict-markers", "-m", "lint")
    assert "test_host.py::test_own_lint" in both.outlines
    assert _lint_ids(both)
    rules = pytester.runpytest("--collect-only", "-q", "--strict-markers", "-m", "infx_lint")
    assert "test_host.py::test_own_lint" not in rules.outlines
    assert _lint_ids(rules) == _lint_ids(both)


def test_m_infx_lint_runs_the_rules_without_reading_any_test_or_recipe(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(test_heavy="raise RuntimeError('imported a test module')\n")
    (recipes / "broken.yaml").write_text("key: broken\nunknown-field: 1\n")
    result = pytester.runpytest("--collect-only", "-q", "-m", "infx_lint")
    assert result.ret == 0, result.stdout.str()
    assert "imported a test module" not in result.stdout.str()
    assert "broken" not in result.stdout.str()
    assert _lint_ids(result)


TESTPATHS_INI = """
[pytest]
infx = true
testpaths = tests
addopts = -p no:cacheprovider
"""


@pytest.mark.parametrize(
    ("markexpr", "recipe_items", "host_tests"),
    [
        ("speedbench", 2, 0),
        ("speedbench or agentic", 2, 0),
        ("speedbench or not speedbench", 0, 1),
        ("not lint", 0, 1),
        ("lint", 0, 0),
        ("", 0, 1),
    ],
)
def test_m_speedbench_runs_the_recipes_where_testpaths_names_only_the_tests(
    pytester: pytest.Pytester, markexpr: str, recipe_items: int, host_tests: int
) -> None:
    """A repository whose ``testpaths`` keeps its recipes out of the test command still runs
    them with ``pytest -m speedbench``; a selection that takes plain tests stays in testpaths."""
    pytester.makeini(TESTPATHS_INI)
    write(pytester.path / "recipes" / "s.yaml", speedbench("s-b300", draft_lengths=[1]))
    write(pytester.path / "tests" / "test_host.py", "def test_plain():\n    pass\n")
    args = ["--collect-only", "-q", "--gpu", "b300", *(["-m", markexpr] if markexpr else [])]
    listed = pytester.runpytest_subprocess(*args)
    lines = [line for line in listed.outlines if "::" in line]
    assert len([line for line in lines if line.startswith("recipes/")]) == recipe_items, lines
    assert len([line for line in lines if line.startswith("tests/")]) == host_tests, lines

"""Installed is not asked for: a project that never opted in runs as it would without
pytest-infx, and its syrupy is syrupy as its users know it; one ini line (or an ``--infx-``
option) turns it on."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import pytest_infx.plugin.activation as activation

FOREIGN_RECIPE = "name: pancakes\nsteps:\n  - mix\n  - fry\n"
PLAIN_TEST = "def test_plain():\n    assert 1 + 1 == 2\n"
OWN_LINT_TEST = """
import pytest

@pytest.mark.lint
def test_style():
    assert True

def test_other():
    assert True
"""
SYRUPY_PROBE = """
def pytest_report_header(config):
    return ["syrupy registered: " + str(config.pluginmanager.get_plugin("syrupy") is not None)]
"""
SNAPSHOT_TESTS = """
def test_mapping(snapshot):
    assert {"a": 1, "b": [2, 3]} == snapshot

def test_text(snapshot):
    assert "pancakes" == snapshot
"""
WITHOUT = ("-p", "no:infx")
"""What a run is like with pytest-infx not installed (syrupy, where installed, stays: a project
that uses it installed it too)."""
_TIMES = re.compile(r" in [0-9.]+s( \([0-9:]+\))?")


def _outcome(result: pytest.RunResult) -> tuple[int, str, list[str]]:
    """Exit code, the closing summary line without its time, and the collected ids."""
    closing = [line for line in result.outlines if line.startswith("=")]
    last = _TIMES.sub("", closing[-1] if closing else "")
    ids = [line for line in result.outlines if "::" in line and not line.startswith(" ")]
    return result.ret, last, ids


def _same_with_and_without(pytester: pytest.Pytester, *args: str) -> tuple[int, str, list[str]]:
    ours = _outcome(pytester.runpytest_subprocess("-p", "no:cacheprovider", *args))
    theirs = _outcome(pytester.runpytest_subprocess("-p", "no:cacheprovider", *WITHOUT, *args))
    assert ours == theirs, (args, ours, theirs)
    return ours


@pytest.fixture
def recipes_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with a ``recipes/`` folder of its own YAML, a common name."""
    (pytester.path / "recipes").mkdir()
    (pytester.path / "recipes" / "pancakes.yaml").write_text(FOREIGN_RECIPE)
    pytester.makepyfile(test_kitchen=PLAIN_TEST)
    return pytester


def test_a_foreign_recipes_folder_is_never_read(recipes_project: pytest.Pytester) -> None:
    code, last, _ = _same_with_and_without(recipes_project)
    assert code == 0 and "1 passed" in last
    _same_with_and_without(recipes_project, "--collect-only", "-q")
    _same_with_and_without(recipes_project, "-m", "speedbench")


def test_a_foreign_lint_marker_is_the_projects_own(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_style=OWN_LINT_TEST)
    code, last, _ = _same_with_and_without(pytester, "-m", "lint")
    assert code == 0 and "1 passed, 1 deselected" in last
    _same_with_and_without(pytester, "-m", "not lint")
    _same_with_and_without(pytester, "-m", "lint", "--collect-only", "-q")
    pytester.makeini("[pytest]\nmarkers =\n    lint: the project's style checks\n")
    code, last, _ = _same_with_and_without(pytester, "-m", "lint", "--strict-markers")
    assert code == 0 and "1 passed, 1 deselected" in last


def test_no_lint_marker_at_all_selects_nothing_as_without(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_kitchen=PLAIN_TEST)
    code, _, _ = _same_with_and_without(pytester, "-m", "lint")
    assert code == pytest.ExitCode.NO_TESTS_COLLECTED


def test_the_short_options_are_not_the_projects(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_kitchen=PLAIN_TEST)
    code, _, _ = _same_with_and_without(pytester, "--gpu", "x")
    assert code == pytest.ExitCode.USAGE_ERROR


def test_syrupy_stays_registered_where_the_project_did_not_opt_in(
    recipes_project: pytest.Pytester,
) -> None:
    recipes_project.makeconftest(SYRUPY_PROBE)
    assert "syrupy registered: True" in recipes_project.runpytest_subprocess().outlines
    recipes_project.makeini("[pytest]\ninfx = true\n")
    opted = recipes_project.runpytest_subprocess("--collect-only")
    assert "syrupy registered: True" in opted.outlines


@pytest.fixture
def snapshot_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A foreign project whose tests use syrupy's ``snapshot`` fixture."""
    pytester.makepyfile(test_snap=SNAPSHOT_TESTS)
    return pytester


def test_a_syrupy_project_writes_and_passes_its_snapshots_as_without(
    snapshot_project: pytest.Pytester,
) -> None:
    snapshots = snapshot_project.path / "__snapshots__"
    for args in ((), WITHOUT):
        shutil.rmtree(snapshots, ignore_errors=True)
        wrote = snapshot_project.runpytest_subprocess(
            "-p", "no:cacheprovider", *args, "--snapshot-update"
        )
        assert wrote.ret == 0, (args, wrote.outlines)
        assert (snapshots / "test_snap.ambr").is_file(), args
    code, last, _ = _same_with_and_without(snapshot_project)
    assert code == 0 and "2 passed" in last


def test_a_syrupy_project_that_names_syrupy_in_its_conftest_runs_as_without(
    snapshot_project: pytest.Pytester,
) -> None:
    snapshot_project.makeconftest('pytest_plugins = ["syrupy"]\n')
    snapshot_project.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update")
    code, last, _ = _same_with_and_without(snapshot_project)
    assert code == 0 and "2 passed" in last


def test_one_ini_line_opts_in(recipes_project: pytest.Pytester) -> None:
    """The foreign recipe is now read, and is a recipe error at its file."""
    recipes_project.makeini("[pytest]\ninfx_recipes = recipes\n")
    result = recipes_project.runpytest_subprocess("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert any("recipes/pancakes.yaml" in line for line in result.outlines)


def test_an_infx_option_opts_in(recipes_project: pytest.Pytester) -> None:
    result = recipes_project.runpytest_subprocess("--collect-only", "-q", "--infx-plan")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert any("recipes/pancakes.yaml" in line for line in result.outlines)


@pytest.mark.parametrize(
    ("args", "on"),
    [
        ([], False),
        (["-m", "lint", "--gpu", "b300"], False),
        (["--infx-plan"], True),
        (["--infx-results=out"], True),
        (["-p", "infx"], True),
        (["-pinfx"], True),
        (["-p", "pytest_infx.plugin"], True),
        (["-p", "no:infx"], False),
        (["-p", "xdist", "tests/infx"], False),
    ],
)
def test_what_the_command_line_asks(args: list[str], on: bool) -> None:
    assert activation.asked_on_command_line(args) is on


@pytest.mark.parametrize(
    ("name", "text", "on"),
    [
        ("pytest.ini", "[pytest]\ninfx = true\n", True),
        ("pytest.ini", "[pytest]\ninfx_recipes = recipes\n", True),
        ("pytest.ini", "[pytest]\naddopts = -q\n", False),
        ("pytest.ini", "[other]\ninfx = true\n", False),
        ("tox.ini", "[pytest]\ninfx_lint = true\n", True),
        ("setup.cfg", "[tool:pytest]\ninfx_golden = g\n", True),
        ("setup.cfg", "[pytest]\ninfx_golden = g\n", False),
        ("pyproject.toml", "[tool.pytest.ini_options]\ninfx_lint = true\n", True),
        ("pyproject.toml", "[tool.pytest]\ninfx = true\n", True),
        ("pyproject.toml", "[tool.pytest.ini_options]\nmarkers = []\n", False),
        ("pyproject.toml", "[tool.other]\ninfx = true\n", False),
        ("pytest.ini", "[pytest]\ninfxy = 1\n", False),
    ],
)
def test_what_the_ini_file_says(tmp_path: Path, name: str, text: str, on: bool) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert activation.ini_opts_in(path) is on


def test_an_override_opts_in() -> None:
    assert activation.ini_opts_in(None, ["infx_lint"])
    assert not activation.ini_opts_in(None, ["addopts"])


def test_a_cell_without_syrupy_says_what_to_install(
    mixed_tree: Path, pytester: pytest.Pytester
) -> None:
    """syrupy is the golden extra; a SPEED-Bench cell run without it fails before any server
    starts, naming the extra."""
    result = pytester.runpytest("-p", "no:syrupy", "--gpu", "cpu", "-m", "speedbench")
    result.assert_outcomes(errors=2)
    assert "pip install 'pytest-infx[golden]'" in result.stdout.str()

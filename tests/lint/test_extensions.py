"""Lint rules from other packages: a ``pytest_infx_lint_rules`` hook and an installed entry
point, for ``pytest -m lint`` and ``infx lint``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_infx.lint.builtin import all_rules
from pytest_infx.lint.extensions import RULES, RuleRegistrationError, checked
from pytest_infx.lint.findings import Finding, Rule
from pytest_infx.providers import Provided

from .helpers import repo_files, write_files

pytest_plugins = ["pytester"]

RULE = """
from pytest_infx.lint import Finding, Rule


def _house_rules(ctx):
    if (ctx.root / "HOUSE.md").exists():
        return []
    return [Finding(rule="house-rules", path="HOUSE.md", line=None, entry=None,
                    message="the house rules file is missing;", hint="add HOUSE.md")]


HOUSE_RULES = Rule("house-rules", "a repository keeps its house rules in HOUSE.md", _house_rules)
"""
HOOK = """

def pytest_infx_lint_rules():
    return [HOUSE_RULES]
"""
LINT = ("-m", "lint", "-p", "no:cacheprovider")


@pytest.fixture
def repo(pytester: pytest.Pytester) -> pytest.Pytester:
    """The passing fixture repository, with a conftest that adds the house-rules rule."""
    write_files(pytester.path, dict(repo_files()))
    pytester.makeini("[pytest]\ninfx = true\n")
    pytester.makeconftest(RULE + HOOK)
    return pytester


def test_a_conftest_rule_runs_and_reports_its_findings(repo: pytest.Pytester) -> None:
    result = repo.runpytest(*LINT)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        [
            "*_ infx-lint::house-rules _*",
            "house-rules: a repository keeps its house rules in HOUSE.md (1 finding)",
            "HOUSE.md: the house rules file is missing; add HOUSE.md",
            "FAILED infx-lint::house-rules*",
        ]
    )
    (repo.path / "HOUSE.md").write_text("be kind\n")
    result = repo.runpytest("-k", "house", *LINT)
    assert result.ret == pytest.ExitCode.OK
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("deselected")) == (1, len(all_rules()))
    assert "failed" not in outcomes


def test_a_conftest_rule_is_an_item_after_the_built_in_ones(repo: pytest.Pytester) -> None:
    result = repo.runpytest("--collect-only", "-q", *LINT)
    ids = [line for line in result.outlines if line.startswith("infx-lint::")]
    assert ids == [*(f"infx-lint::{rule.id}" for rule in all_rules()), "infx-lint::house-rules"]


def test_select_and_ignore_name_a_conftest_rule_by_id_or_family(repo: pytest.Pytester) -> None:
    repo.makeini("[pytest]\ninfx = true\ninfx_lint_select = house\n")
    result = repo.runpytest("--collect-only", "-q", *LINT)
    assert [line for line in result.outlines if line.startswith("infx-lint::")] == [
        "infx-lint::house-rules"
    ]
    repo.makeini("[pytest]\ninfx = true\ninfx_lint_ignore = house-rules\n")
    result = repo.runpytest("--collect-only", "-q", *LINT)
    assert [line for line in result.outlines if line.startswith("infx-lint::")] == [
        f"infx-lint::{rule.id}" for rule in all_rules()
    ]


@pytest.mark.parametrize(
    ("conftest", "message"),
    [
        (
            RULE.replace('Rule("house-rules"', 'Rule("changelog-schema"') + HOOK,
            "ERROR: pytest_infx_lint_rules in */conftest.py: lint rule id 'changelog-schema' is"
            " already provided by pytest-infx itself; give the rule another id",
        ),
        (
            RULE + HOOK.replace("[HOUSE_RULES]", "[HOUSE_RULES, 'house-size']"),
            "ERROR: pytest_infx_lint_rules in */conftest.py: 'house-size' is not a lint rule;"
            " give pytest_infx.lint.Rule(id, description, check) values",
        ),
        (
            RULE + HOOK.replace("[HOUSE_RULES]", "_house_rules"),
            "ERROR: pytest_infx_lint_rules in */conftest.py: returned <function _house_rules *>;"
            " return a list of pytest_infx.lint.Rule (or None)",
        ),
    ],
    ids=["taken-id", "not-a-rule", "not-a-list"],
)
def test_a_bad_rule_provider_is_a_usage_error_naming_itself(
    repo: pytest.Pytester, conftest: str, message: str
) -> None:
    repo.makeconftest(conftest)
    result = repo.runpytest(*LINT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_two_providers_of_one_rule_id_are_refused(repo: pytest.Pytester) -> None:
    repo.makepyfile(other_plugin=RULE + HOOK)
    repo.syspathinsert()
    result = repo.runpytest("-p", "other_plugin", *LINT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: pytest_infx_lint_rules in *: lint rule id 'house-rules' is already provided"
            " by pytest_infx_lint_rules in *; give the rule another id"
        ]
    )


def _installed(site: Path, target: str) -> None:
    """A separately installed package (a distribution on the path, with its own
    ``entry_points.txt``) whose entry point names ``target``."""
    (site / "infx_house").mkdir(parents=True)
    (site / "infx_house" / "__init__.py").write_text(
        RULE + "\n\ndef rules():\n    return [HOUSE_RULES]\n"
    )
    info = site / "infx_house-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: infx-house\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[pytest_infx_lint_rules]\nhouse = {target}\n")


def _infx(repo: pytest.Pytester, site: Path, *args: str) -> pytest.RunResult:
    """``infx`` in a fresh interpreter that has the package at ``site`` installed."""
    path = os.pathsep.join([str(site), *sys.path])
    code = "import sys; from pytest_infx.cli import main; sys.exit(main(sys.argv[1:]))"
    env = f"PYTHONPATH={path}"
    return repo.run("env", env, sys.executable, "-c", code, *args)


@pytest.mark.parametrize("target", ["infx_house:HOUSE_RULES", "infx_house:rules"])
def test_infx_lint_runs_an_installed_packages_rules(repo: pytest.Pytester, target: str) -> None:
    site = repo.path / "site"
    _installed(site, target)
    result = _infx(repo, site, "lint", "--root", str(repo.path))
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "FAIL house-rules: a repository keeps its house rules in HOUSE.md",
            "  HOUSE.md: the house rules file is missing; add HOUSE.md",
        ]
    )
    result = _infx(repo, site, "lint", "--root", str(repo.path), "--ignore", "house")
    assert result.ret == 0
    assert "house-rules" not in result.stdout.str()


def test_pytest_lint_runs_an_installed_packages_rules(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.makeconftest("")
    site = repo.path / "site"
    _installed(site, "infx_house:HOUSE_RULES")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), *sys.path]))
    result = repo.runpytest_subprocess(*LINT)
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(["FAILED infx-lint::house-rules*"])


def test_infx_lint_refuses_an_installed_rule_that_takes_a_built_in_id(
    repo: pytest.Pytester,
) -> None:
    site = repo.path / "site"
    _installed(site, "infx_house:HOUSE_RULES")
    init = site / "infx_house" / "__init__.py"
    init.write_text(init.read_text().replace('Rule("house-rules"', 'Rule("golden-registry"'))
    result = _infx(repo, site, "lint", "--root", str(repo.path))
    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            "error: entry point 'house' (infx_house:HOUSE_RULES) of infx-house 0.1 in group"
            " pytest_infx_lint_rules: lint rule id 'golden-registry' is already provided by"
            " pytest-infx itself; give the rule another id"
        ]
    )


def _finding(ctx: object) -> list[Finding]:
    return []


@pytest.mark.parametrize(
    ("rule_id", "message"),
    [
        ("house rules", "lint rule id 'house rules' is not usable; use letters, digits,"),
        ("house,rules", "lint rule id 'house,rules' is not usable"),
        ("", "lint rule id '' is not usable"),
    ],
)
def test_a_rule_id_that_no_selector_could_name_is_refused(rule_id: str, message: str) -> None:
    offered = [Provided("plugin p", Rule(rule_id, "d", _finding))]
    with pytest.raises(RuleRegistrationError, match=f"^plugin p: {message}"):
        checked(offered, all_rules())


def test_provided_rules_keep_their_order_after_the_built_in_ids() -> None:
    first, second = Rule("house-a", "a", _finding), Rule("house-b", "b", _finding)
    offered = [*RULES.offered("p", [first]), *RULES.offered("q", second), *RULES.offered("r", None)]
    assert checked(offered, all_rules()) == (first, second)

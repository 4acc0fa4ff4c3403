from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.cli import main
from pytest_infx.lint.session import (
    CLI,
    PYTEST,
    LintRequest,
    LintSetupError,
    open_session,
)
from pytest_infx.settings import environment

from .helpers import DFLASH_RECIPE, ENTRY_A, MIMO_CURVE, entry, git, join, repo_files, write_files

pytest_plugins = ["pytester"]

DFLASH = "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"
CURVE = "golden/mimov2.6flash_dflash.yaml"
SCRIPT = "scripts/collect.sh"
Judged = tuple[dict[str, list[str]], dict[str, str]]


def _plant(root: Path) -> None:
    """A repository whose change since ``origin/main`` breaks one rule of every family: a
    changelog entry without its PR link, a header comment, a misspelled recipe field and an AL
    no curve can have."""
    files = {**repo_files(), "perf-changelog.yaml": ENTRY_A, SCRIPT: "#!/bin/bash\necho ok\n"}
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    write_files(
        root,
        {
            "perf-changelog.yaml": join(ENTRY_A, entry("a", pr_link="TBD")),
            SCRIPT: "#!/bin/bash\n# This script collects the results\necho ok\n",
            DFLASH: DFLASH_RECIPE.replace(
                "  concurrency: 32", "  concurrency: 32\n  concurency: 8"
            ),
            CURVE: MIMO_CURVE.replace("3: 2.97", "3: 4.97"),
        },
    )


def _by_pytest(pytester: pytest.Pytester) -> Judged:
    """Each failed rule's finding lines and each skipped rule's reason, from pytest's reports."""
    pytester.makeini("[pytest]\ninfx = true\n")
    recorded = pytester.inline_run("-m", "lint", "-p", "no:cacheprovider")
    failed: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    for report in recorded.getreports("pytest_runtest_logreport"):
        rule = report.nodeid.removeprefix("infx-lint::")
        if report.failed:
            failed[rule] = str(report.longrepr).splitlines()[1:]
        elif (report.skipped and report.when == "setup") or report.skipped:
            assert isinstance(report.longrepr, tuple)
            skipped[rule] = report.longrepr[2].removeprefix(f"Skipped: {rule}: ")
    return failed, skipped


def _by_cli(root: Path, capsys: pytest.CaptureFixture[str]) -> Judged:
    """The same, from what ``infx lint`` prints."""
    capsys.readouterr()
    assert main(["lint", "--root", str(root)]) == 1
    failed: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    current: list[str] | None = None
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("FAIL "):
            current = failed.setdefault(line.removeprefix("FAIL ").split(":", 1)[0], [])
        elif line.startswith("  ") and current is not None:
            current.append(line.removeprefix("  "))
        else:
            current = None
            if line.startswith("skip "):
                rule, reason = line.removeprefix("skip ").split(": ", 1)
                skipped[rule] = reason
    return failed, skipped


def test_pytest_and_infx_lint_judge_a_planted_repository_the_same(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _plant(pytester.path)
    by_pytest = _by_pytest(pytester)
    by_cli = _by_cli(pytester.path, capsys)
    assert by_pytest == by_cli
    failed = by_pytest[0]
    assert {"changelog-pr-link", "comments-header", "recipes-load", "golden-format"} <= set(failed)
    assert any(f"{SCRIPT}:2: header comment" in line for line in failed["comments-header"])
    assert any(f"{CURVE}:" in line and "AL 4.97" in line for line in failed["golden-format"])
    assert any("concurency" in line for line in failed["recipes-load"])


def _request(root: Path, **given: object) -> LintRequest:
    return LintRequest(root, environment({}), PYTEST, **given)  # type: ignore[arg-type]


def test_a_request_that_cannot_work_names_the_input_as_its_front_door_spells_it(
    tmp_path: Path,
) -> None:
    _plant(tmp_path)
    with pytest.raises(LintSetupError, match=r"^--infx-base: git ref 'nope' does not exist"):
        open_session(_request(tmp_path, base="nope"))
    with pytest.raises(LintSetupError, match=r"^ini infx_lint_select / infx_lint_ignore: unkn"):
        open_session(_request(tmp_path, select=("coments",)))
    with pytest.raises(LintSetupError, match=r"^--changelog-only-entries: 'often' is not"):
        open_session(LintRequest(tmp_path, environment({}), CLI, changelog_only_entries="often"))


def test_the_default_base_may_be_missing_and_the_context_says_so(tmp_path: Path) -> None:
    _plant(tmp_path)
    git(tmp_path, "update-ref", "-d", "refs/remotes/origin/main")
    ctx = open_session(_request(tmp_path, select=("golden",))).context()
    assert (ctx.base_ref, ctx.base_missing) == (None, "origin/main")
    given = open_session(_request(tmp_path, base="main", main=True)).context()
    assert given.base_ref == "main" and given.pull.main
    assert (given.recipes_dir, given.golden_dir) == (tmp_path / "recipes", tmp_path / "golden")

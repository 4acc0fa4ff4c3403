from __future__ import annotations

import pytest
from lint.helpers import DFLASH_RECIPE, ENTRY_A, git, line_of, repo_files, write_files

from pytest_infx.lint.builtin import all_rules

pytest_plugins = ["pytester"]

DFLASH = "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"
RECIPE_AND_GOLDEN_RULES = [r.id for r in all_rules() if r.id.startswith(("recipes-", "golden-"))]


@pytest.fixture
def lint_repo(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder holding the passing fixture repository."""
    write_files(pytester.path, dict(repo_files()))
    pytester.makeini("[pytest]\ninfx = true\n")
    return pytester


def test_every_rule_is_an_item_with_its_id(lint_repo: pytest.Pytester) -> None:
    result = lint_repo.runpytest("--collect-only", "-q", "-m", "lint", "-p", "no:cacheprovider")
    ids = [line for line in result.outlines if line.startswith("infx-lint::")]
    assert ids == [f"infx-lint::{rule.id}" for rule in all_rules()]


def test_lint_passes_and_skips_with_reasons(lint_repo: pytest.Pytester) -> None:
    result = lint_repo.runpytest("-m", "lint", "-rs", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == len(RECIPE_AND_GOLDEN_RULES) + 3
    assert outcomes["skipped"] == 6
    result.stdout.fnmatch_lines(["SKIPPED * changelog-schema: no perf-changelog.yaml in *"])


def test_a_failure_names_rule_file_line_and_fix_without_traceback(
    lint_repo: pytest.Pytester,
) -> None:
    bad = DFLASH_RECIPE.replace(
        "thinking_on: {enable_thinking: true}", "thinking_on: {thinking: true}"
    )
    write_files(lint_repo.path, {DFLASH: bad})
    result = lint_repo.runpytest("-m", "lint", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        [
            "*_ infx-lint::recipes-thinking _*",
            "recipes-thinking: thinking_on chat-template kwargs turn thinking on * (1 finding)",
            f"{DFLASH}:{line_of(bad, 'thinking_on:')}: speedbench.thinking-modes.thinking_on:"
            ' {"thinking": true} does not turn thinking on for mimo models; use'
            ' {"enable_thinking": true}',
            "FAILED infx-lint::recipes-thinking*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "LintFailed" not in result.stdout.str()


def test_a_warning_rule_passes_and_shows_its_findings_as_a_warning(
    lint_repo: pytest.Pytester,
) -> None:
    bad = DFLASH_RECIPE.replace("golden: mimov2.6flash_dflash", "golden: mimov2.6flash_mtp")
    write_files(lint_repo.path, {DFLASH: bad})
    result = lint_repo.runpytest(
        "-m", "lint", "-k", "recipes-golden-uncommitted", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.OK
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1
    # pytest may add warnings of its own (assertion rewriting) beside the one lint warning
    assert result.stdout.str().count(": LintWarning: ") == 1
    result.stdout.fnmatch_lines(
        [
            "  infx-lint::recipes-golden-uncommitted:0: LintWarning: recipes-golden-uncommitted: *",
            f"  {DFLASH}:{line_of(bad, 'golden:')}: speedbench.golden: no committed golden curve*",
        ]
    )


def test_k_selects_rules_by_id(lint_repo: pytest.Pytester) -> None:
    result = lint_repo.runpytest(
        "--collect-only", "-q", "-m", "lint", "-k", "changelog", "-p", "no:cacheprovider"
    )
    ids = [line for line in result.outlines if line.startswith("infx-lint::")]
    assert ids == [f"infx-lint::{r.id}" for r in all_rules() if r.id.startswith("changelog-")]


def test_the_header_counts_the_rules_as_collected(lint_repo: pytest.Pytester) -> None:
    result = lint_repo.runpytest("-m", "lint", "-k", "changelog", "-p", "no:cacheprovider")
    total, chosen = len(all_rules()), sum(r.id.startswith("changelog-") for r in all_rules())
    result.stdout.fnmatch_lines(
        [f"collected {total} items / {total - chosen} deselected / {chosen} selected"]
    )


def test_explicit_paths_without_lint_marker_add_no_lint_items(lint_repo: pytest.Pytester) -> None:
    lint_repo.makepyfile(test_one="def test_one():\n    pass\n")
    result = lint_repo.runpytest("--collect-only", "-q", "test_one.py", "-p", "no:cacheprovider")
    assert not [line for line in result.outlines if line.startswith("infx-lint::")]
    result = lint_repo.runpytest(
        "--collect-only", "-q", "test_one.py", "-m", "lint", "-p", "no:cacheprovider"
    )
    assert not [line for line in result.outlines if line.startswith("infx-lint::")]
    result = lint_repo.runpytest(
        "--collect-only", "-q", "test_one.py", "--infx-lint-root", ".", "-p", "no:cacheprovider"
    )
    assert len([line for line in result.outlines if line.startswith("infx-lint::")]) == len(
        all_rules()
    )


def test_lint_root_option_and_ini(pytester: pytest.Pytester) -> None:
    other = pytester.path / "other"
    write_files(other, dict(repo_files()))
    bad = DFLASH_RECIPE.replace("block-size: 8", "block-size: 4")
    write_files(other, {DFLASH: bad})
    pytester.makeini("[pytest]\ninfx = true\n")
    args = ("-m", "lint", "-k", "draft", "-p", "no:cacheprovider")
    result = pytester.runpytest("--infx-lint-root", "other", *args)
    result.stdout.fnmatch_lines(["*draft length 4 is not valid for dflash with block size 4*"])
    assert result.parseoutcomes()["failed"] == 1
    pytester.makeini("[pytest]\ninfx = true\ninfx_lint_root = other\n")
    assert pytester.runpytest(*args).parseoutcomes()["failed"] == 1
    pytester.makeini("[pytest]\ninfx = true\n")
    result = pytester.runpytest("-rs", *args)
    result.stdout.fnmatch_lines(["SKIPPED * no recipe folder*"])


def test_the_recipe_folder_option_moves_what_lint_judges(pytester: pytest.Pytester) -> None:
    """Lint judges the recipe folder the run collects, named by the option or the ini."""
    files = {
        name.replace("recipes/", "bench/", 1): text for name, text in dict(repo_files()).items()
    }
    bad = DFLASH_RECIPE.replace("block-size: 8", "block-size: 4")
    write_files(pytester.path, {**files, DFLASH.replace("recipes/", "bench/", 1): bad})
    pytester.makeini("[pytest]\ninfx = true\n")
    args = ("-m", "lint", "-k", "draft", "-p", "no:cacheprovider")
    result = pytester.runpytest("--infx-recipes", "bench", *args)
    result.stdout.fnmatch_lines(["*draft length 4 is not valid for dflash with block size 4*"])
    assert result.parseoutcomes()["failed"] == 1


def test_base_option_drives_the_changelog_rules(lint_repo: pytest.Pytester) -> None:
    root = lint_repo.path
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    (root / "perf-changelog.yaml").write_text(ENTRY_A)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "base")
    (root / "perf-changelog.yaml").write_text(ENTRY_A.replace("pull/2707", "pull/2708"))
    args = ("-m", "lint", "-k", "append-only", "-rs", "-p", "no:cacheprovider")
    result = lint_repo.runpytest(*args)
    result.stdout.fnmatch_lines(["SKIPPED * no base to compare with (origin/main not found*"])
    result = lint_repo.runpytest("--infx-base", "base", *args)
    result.stdout.fnmatch_lines(["*pr-link of an old entry changed*"])
    assert result.parseoutcomes()["failed"] == 1
    result = lint_repo.runpytest("--infx-base", "nope", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--infx-base: git ref 'nope' does not exist*"])


def test_lint_alone_reads_no_recipe_but_runs_the_hosts_lint_tests(
    lint_repo: pytest.Pytester,
) -> None:
    lint_repo.makepyfile(
        test_own="import pytest\n\n@pytest.mark.lint\ndef test_own_lint():\n    pass\n\n"
        "def test_other():\n    pass\n"
    )
    (lint_repo.path / "recipes" / "broken.yaml").write_text("key: broken\nunknown-field: 1\n")
    lint_repo.makeini("[pytest]\ninfx = true\ntestpaths = . recipes\n")
    result = lint_repo.runpytest("-m", "lint", "-k", "golden or own", "-p", "no:cacheprovider")
    assert "broken" not in result.stdout.str()
    chosen = sum("golden" in r.id for r in all_rules())
    result.assert_outcomes(passed=chosen + 1, deselected=len(all_rules()) - chosen + 1)


MARKED = "import pytest\n\n@pytest.mark.lint\ndef test_own_lint():\n    pass\n"
UNIMPORTABLE = "import package_that_is_not_installed\n\ndef test_needs_it():\n    pass\n"


@pytest.fixture
def host(pytester: pytest.Pytester) -> pytest.Pytester:
    write_files(pytester.path, dict(repo_files()))
    pytester.makeini("[pytest]\ninfx = true\ntestpaths = tests\n")
    write_files(
        pytester.path,
        {"tests/test_own.py": MARKED, "tests/test_heavy.py": UNIMPORTABLE},
    )
    return pytester


def test_a_module_that_cannot_mark_lint_is_not_imported(host: pytest.Pytester) -> None:
    result = host.runpytest("-m", "lint", "-p", "no:cacheprovider", "-q")
    assert "package_that_is_not_installed" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    passed = result.parseoutcomes()["passed"]
    judged = sum(r.id.startswith(("recipes-", "golden-", "comments-")) for r in all_rules())
    assert passed == judged + 1


def test_a_conftest_that_marks_lint_keeps_every_module_below_it(host: pytest.Pytester) -> None:
    write_files(
        host.path,
        {
            "tests/conftest.py": "def pytest_collection_modifyitems(items):\n"
            "    for item in items:\n        item.add_marker('lint')\n"
        },
    )
    result = host.runpytest("-m", "lint", "-p", "no:cacheprovider", "-q")
    result.stdout.fnmatch_lines(["*ModuleNotFoundError*package_that_is_not_installed*"])

"""Replay a history of pull requests on an InferenceX-sized repository, each commit linted
against its parent as CI lints a pull request against its base."""

from __future__ import annotations

from pathlib import Path

import pytest

# in-process pytester runs re-import yaml unless it is loaded first; libyaml keeps the old nodes
import pytest_infx.lint.changelog  # noqa: F401
from pytest_infx.lint.builtin import all_rules
from pytest_infx.lint.context import build_context
from pytest_infx.lint.findings import Finding
from pytest_infx.lint.scope import PullRequest as Pull

from .history import (
    ENTRIES,
    REPO,
    PullRequest,
    base_files,
    build,
    config_keys,
    git,
    render_entry,
    write,
)

pytest_plugins = ["pytester"]

Commits = tuple[Path, str, list[tuple[PullRequest, str]]]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Commits:
    repo = tmp_path_factory.mktemp("replay") / "InferenceX"
    first, commits = build(repo)
    return repo, first, commits


def lint(
    repo: Path, commit: str, *, audit: bool = False, pull: Pull | None = None
) -> list[Finding]:
    """Every finding of every rule that runs, with the work tree at ``commit`` and its parent
    as the base."""
    git(repo, "checkout", "-q", "--detach", commit)
    ctx = build_context(repo, base_ref=f"{commit}^", audit=audit, pull=pull)
    found: list[Finding] = []
    for rule in all_rules():
        if rule.skip_reason(ctx) is None:
            found.extend(rule.check(ctx))
    return found


def failing(found: list[Finding]) -> set[str]:
    return {finding.rule for finding in found}


def test_history_is_inferencex_sized(history: Commits) -> None:
    repo, first, _ = history
    text = git(repo, "show", f"{first}:perf-changelog.yaml")
    assert text.count("- config-keys:") == ENTRIES >= 700


@pytest.mark.parametrize("index", range(17), ids=lambda i: f"pr{i}")
def test_each_pull_request_fails_exactly_its_rules(history: Commits, index: int) -> None:
    repo, _, commits = history
    request, commit = commits[index]
    found = lint(repo, commit)
    assert failing(found) == request.fails, (request.name, [f.render() for f in found])


def test_every_defect_is_one_finding(history: Commits) -> None:
    """One root cause, one finding: CRLF, a missing final newline, an empty pr-link."""
    repo, _, commits = history
    by_name = {request.name: commit for request, commit in commits}
    crlf = lint(repo, by_name["crlf-entry"])
    assert [f.message for f in crlf] == ["uses CRLF line endings (5 lines); convert to LF."]
    newline = lint(repo, by_name["no-final-newline"])
    assert [f.message for f in newline] == ["the file does not end with a newline."]
    empty = lint(repo, by_name["empty-pr-link"])
    assert [(f.rule, f.message) for f in empty] == [("changelog-schema", "'pr-link' is empty.")]


def test_entry_numbers_are_counted_from_one(history: Commits) -> None:
    repo, _, commits = history
    commit = dict((r.name, c) for r, c in commits)["bad-pr-link"]
    (finding,) = lint(repo, commit)
    last = git(repo, "show", f"{commit}:perf-changelog.yaml").count("- config-keys:")
    assert last == ENTRIES + 3
    assert f"perf-changelog.yaml:{finding.line} (entry {last}): pr-link 'TBD'" in finding.render()


def test_pr_link_against_a_known_pr_number_and_on_main(history: Commits) -> None:
    repo, _, commits = history
    by_name = {request.name: commit for request, commit in commits}
    placeholder = by_name["appends-an-entry"]
    assert lint(repo, placeholder, pull=Pull(number=2001)) == []
    (on_main,) = lint(repo, placeholder, pull=Pull(main=True))
    assert on_main.rule == "changelog-pr-link"
    assert "on the main branch" in on_main.message
    linked = by_name["adds-a-key-and-a-script"]
    (other_pr,) = lint(repo, linked, pull=Pull(number=2001))
    assert other_pr.message.endswith("is not this pull request (#2001).")
    assert lint(repo, linked, pull=Pull(number=2002)) == []
    assert lint(repo, linked, pull=Pull(main=True)) == []


def test_history_audit_finds_the_historical_defects(history: Commits) -> None:
    repo, _, commits = history
    clean = commits[0][1]
    found = lint(repo, clean, audit=True)
    messages = {(f.rule, f.line and f.entry is not None and f.entry + 1, f.message) for f in found}
    assert ("changelog-bytes", 499, "line holds only whitespace.") in messages
    assert ("changelog-bytes", 599, "2 blank lines between entries.") in messages
    assert any(f.rule == "changelog-bytes" and f.entry == 99 for f in found)
    headers = sorted(f.path for f in found if f.rule == "comments-header")
    assert headers == [f"benchmarks/single_node/collector_{n:02d}.sh" for n in range(0, 40, 4)]


def test_history_audit_finds_everything_pr_mode_finds(history: Commits) -> None:
    repo, _, commits = history
    for request, commit in commits:
        scoped = {f.render() for f in lint(repo, commit)}
        audited = {f.render() for f in lint(repo, commit, audit=True)}
        assert scoped <= audited, request.name


@pytest.fixture
def small_history(pytester: pytest.Pytester) -> pytest.Pytester:
    """A small InferenceX-shaped repository (history with defects) and one clean pull
    request on top, in the work tree; ``origin/main`` is the history."""
    repo = pytester.path
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    keys = config_keys()
    write(repo, base_files(keys))
    pytester.makeini("[pytest]\ninfx = true\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "history")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    key = keys[0]
    master = repo / "configs/nvidia-master.yaml"
    master.write_text(master.read_text().replace("conc-end: 64", "conc-end: 96", 1))
    log = repo / "perf-changelog.yaml"
    log.write_text(log.read_text() + "\n" + render_entry([key], "XXX"))
    return pytester


def test_pytest_m_lint_passes_a_clean_pr_and_audits_history_on_request(
    small_history: pytest.Pytester,
) -> None:
    passed = small_history.runpytest("-m", "lint", "-p", "no:cacheprovider", "--infx-pr", "7")
    assert passed.ret == pytest.ExitCode.OK, passed.stdout.str()
    passed.stdout.fnmatch_lines(["*infx lint*", "PR mode: judged the change since origin/main*"])
    audit = small_history.runpytest("-m", "lint", "-p", "no:cacheprovider", "--infx-lint-all")
    assert audit.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = audit.parseoutcomes()
    assert outcomes["failed"] == 2
    audit.stdout.fnmatch_lines(
        ["FAILED infx-lint::changelog-bytes*", "FAILED infx-lint::comments-header*"]
    )


def test_a_missing_base_is_a_visible_warning(small_history: pytest.Pytester) -> None:
    git(small_history.path, "update-ref", "-d", "refs/remotes/origin/main")
    result = small_history.runpytest("-m", "lint", "-p", "no:cacheprovider", "-rs")
    result.stdout.fnmatch_lines(
        [
            "*- infx lint -*",
            "WARNING: base ref 'origin/main' not found in *: the lint rules judged the whole"
            " history, not this change, and append-only, pr-link and coverage were skipped.",
            "Fetch the base (git fetch origin main; *) or name one with --infx-base REF.",
        ]
    )


def test_scenario_types_come_from_the_ini_and_main_rejects_placeholders(
    small_history: pytest.Pytester,
) -> None:
    log = small_history.path / "perf-changelog.yaml"
    text = log.read_text()
    new = render_entry([config_keys()[0]], "XXX").replace(
        "  description:", "  scenario-type:\n    - long-context\n  description:"
    )
    log.write_text(text[: text.rindex("- config-keys:")] + new)
    strict = small_history.runpytest("-m", "lint", "-p", "no:cacheprovider", "-k", "schema")
    strict.stdout.fnmatch_lines(
        ["*scenario-type 'long-context' is not one of fixed-seq-len, agentic-coding.*"]
    )
    small_history.makeini(
        "[pytest]\ninfx = true\ninfx_scenario_types =\n    fixed-seq-len\n    long-context\n"
    )
    assert small_history.runpytest("-m", "lint", "-p", "no:cacheprovider").ret == 0
    on_main = small_history.runpytest("-m", "lint", "-p", "no:cacheprovider", "--infx-main")
    on_main.stdout.fnmatch_lines(
        [
            "*(entry 721): on the main branch a new entry's pr-link must be its PR URL;"
            " found 'XXX'.*",
            "FAILED infx-lint::changelog-pr-link*",
        ]
    )


def test_run_from_the_repositorys_test_folder_lints_the_whole_repository(
    small_history: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """InferenceX keeps its pytest.ini in utils/ and runs pytest there."""
    utils = small_history.path / "utils"
    write(
        utils,
        {
            "pytest.ini": "[pytest]\ninfx = true\ntestpaths = .\n",
            "test_math.py": "def test_x(): pass\n",
        },
    )
    monkeypatch.chdir(utils)
    result = small_history.runpytest("-m", "infx_lint", "-p", "no:cacheprovider", "--infx-pr", "7")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"PR mode: judged the change since origin/main in {small_history.path}"]
    )
    assert "no perf-changelog.yaml" not in result.stdout.str()


def test_a_lint_run_that_judges_nothing_fails_with_the_reason(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    result = pytester.runpytest("-m", "infx_lint", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            f"ERROR: nothing to judge in {pytester.path}: every lint rule was skipped"
            " (no perf-changelog.yaml in *",
            "Point the lint at the repository: ini infx_lint_root *",
        ]
    )


def test_collection_errors_that_stop_lint_name_the_command_that_does_not_collect(
    small_history: pytest.Pytester,
) -> None:
    write(
        small_history.path,
        {
            "tests/test_host.py": "import pytest\nimport not_installed\n\n@pytest.mark.lint\n"
            "def test_x(): pass\n"
        },
    )
    stopped = small_history.runpytest("-m", "lint", "-p", "no:cacheprovider", "--infx-pr", "7")
    assert stopped.ret == pytest.ExitCode.INTERRUPTED
    stopped.stdout.fnmatch_lines(
        [
            "ERROR: 1 collection error in this repository's own tests stopped the run before"
            " any lint rule ran.",
            "To lint without collecting them, run: pytest -m infx_lint",
        ]
    )
    alone = small_history.runpytest("-m", "infx_lint", "-p", "no:cacheprovider", "--infx-pr", "7")
    assert alone.ret == pytest.ExitCode.OK, alone.stdout.str()


def test_a_repository_selects_its_rule_families(small_history: pytest.Pytester) -> None:
    args = ("-m", "lint", "-p", "no:cacheprovider", "--infx-lint-all", "-q")
    small_history.makeini("[pytest]\ninfx = true\ninfx_lint_ignore = comments\n")
    audit = small_history.runpytest(*args)
    audit.stdout.fnmatch_lines(["FAILED infx-lint::changelog-bytes*"])
    assert "comments-" not in audit.stdout.str()
    small_history.makeini(
        "[pytest]\ninfx = true\ninfx_lint_select = changelog-schema, comments-header\n"
    )
    chosen = small_history.runpytest("--collect-only", *args)
    assert [line for line in chosen.outlines if line.startswith("infx-lint::")] == [
        "infx-lint::changelog-schema",
        "infx-lint::comments-header",
    ]
    small_history.makeini("[pytest]\ninfx = true\ninfx_lint_select = changelog comment-header\n")
    typo = small_history.runpytest(*args)
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(
        ["*infx_lint_select / infx_lint_ignore: unknown lint rule id 'comment-header'; *"]
    )


def test_changelog_only_entries_are_a_repository_setting(small_history: pytest.Pytester) -> None:
    """InferenceX's results recovery appends entries that repeat an earlier entry's keys and
    description with the recovery PR's link, and changes nothing else."""
    repo = small_history.path
    git(repo, "checkout", "-q", "--", ".")
    log = repo / "perf-changelog.yaml"
    history = log.read_text()
    first = history[: history.index("\n- config-keys:", 1) + 1]
    repeated = first.replace(f"{REPO}/1001", "XXX")
    log.write_text(history + "\n" + repeated)
    args = ("-m", "lint", "-p", "no:cacheprovider", "-k", "coverage")
    forbidden = small_history.runpytest(*args)
    forbidden.stdout.fnmatch_lines(["*new entry, but no recipe key changed since origin/main.*"])
    assert forbidden.ret == pytest.ExitCode.TESTS_FAILED
    repeat = ("-o", "infx_changelog_only_entries=repeat")
    assert small_history.runpytest(*args, *repeat).ret == pytest.ExitCode.OK
    log.write_text(history + "\n" + repeated.replace("Change number 1", "Something else"))
    reworded = small_history.runpytest(*args, *repeat)
    reworded.stdout.fnmatch_lines(
        ["*Remove the entry, or make it one that may change no key: repeat an earlier entry's*"]
    )
    assert reworded.ret == pytest.ExitCode.TESTS_FAILED
    matched = ("-o", "infx_changelog_only_entries=match:^Something")
    assert small_history.runpytest(*args, *matched).ret == pytest.ExitCode.OK
    bad = small_history.runpytest(*args, "-o", "infx_changelog_only_entries=sometimes")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        ["*infx_changelog_only_entries: 'sometimes' is not one of forbid, repeat, match:REGEX"]
    )

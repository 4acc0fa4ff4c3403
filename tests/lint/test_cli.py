from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_infx.cli import main

from .conftest import MakeRepo
from .helpers import ENTRY_A, entry, git, join


def test_lint_reports_findings_and_exits_1(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a", pr_link="TBD")))
    assert main(["lint", "--root", str(ctx.root), "--base", "origin/main"]) == 1
    out = capsys.readouterr().out
    assert "FAIL changelog-pr-link" in out
    assert "perf-changelog.yaml:13 (entry 2): pr-link 'TBD' is not accepted" in out
    assert "ok   changelog-schema" in out
    assert "1 finding(s)" in out


def test_lint_passes_and_uses_origin_main_by_default(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a")))
    assert main(["lint", "--root", str(ctx.root)]) == 0
    out = capsys.readouterr().out
    assert "ok   changelog-append-only" in out
    assert "skip changelog-config-keys: recipe keys unknown" in out


def test_lint_refuses_a_missing_base(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = changelog_repo(ENTRY_A, ENTRY_A)
    assert main(["lint", "--root", str(ctx.root), "--base", "nope"]) == 2
    assert "error: --base: git ref 'nope' does not exist in" in capsys.readouterr().err


def test_lint_reads_recipe_keys_and_changed_keys(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(__file__).resolve().parents[2] / "recipes"
    ctx = changelog_repo(ENTRY_A, ENTRY_A)
    git(ctx.root, "rm", "-q", "--cached", "perf-changelog.yaml")
    git(ctx.root, "commit", "-q", "-m", "no changelog yet")
    git(ctx.root, "update-ref", "refs/remotes/origin/main", "HEAD")
    shutil.copytree(source, ctx.root / "recipes")
    (ctx.root / "perf-changelog.yaml").write_text(
        entry("smollm2-bf16-cpu-vllm-ngram", "smollm2-bf16-cpu-vllm-nope")
    )
    assert main(["lint", "--root", str(ctx.root)]) == 1
    out = capsys.readouterr().out
    assert "config key 'smollm2-bf16-cpu-vllm-nope' matches no recipe key" in out
    assert "recipe key 'smollm2-bf16-cpu-vllm-draft' changed since origin/main but no new" in out


def test_lint_pr_number_main_branch_and_history_audit(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ENTRY_A.replace("  description:", "  description:   ")
    ctx = changelog_repo(base, join(base, entry("a", pr_link="XXX")))
    root = str(ctx.root)
    assert main(["lint", "--root", root, "--pr", "7"]) == 0
    assert main(["lint", "--root", root, "--main"]) == 1
    assert "on the main branch a new entry's pr-link must be its PR URL" in capsys.readouterr().out
    assert main(["lint", "--root", root, "--all"]) == 1
    out = capsys.readouterr().out
    assert (
        "perf-changelog.yaml:5 (entry 1): trailing whitespace after the text at column 15." in out
    )


def test_lint_selects_rules_and_refuses_unknown_ids(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a", pr_link="TBD")))
    root = str(ctx.root)
    assert main(["lint", "--root", root, "--ignore", "changelog-pr-link"]) == 0
    assert "changelog-pr-link" not in capsys.readouterr().out
    assert main(["lint", "--root", root, "--select", "changelog-schema,changelog-pr-link"]) == 1
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines()[:2]] == [
        "ok   changelog-schema",
        "FAIL changelog-pr-link",
    ]
    assert main(["lint", "--root", root, "--select", "changelogs"]) == 2
    assert "unknown lint rule id 'changelogs'" in capsys.readouterr().err


def test_lint_that_judges_nothing_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    assert main(["lint", "--root", str(tmp_path)]) == 1
    assert f"error: nothing to judge in {tmp_path}" in capsys.readouterr().out


def test_lint_allows_changelog_only_entries_as_told(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    recovered = ENTRY_A.replace("pull/2707", "pull/2801")
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, recovered))
    master = ctx.root / "configs" / "nvidia-master.yaml"
    master.parent.mkdir()
    master.write_text("dsv4-fp4-b200-vllm-agentic-mtp:\n  image: example/vllm:v1\n")
    git(ctx.root, "add", "configs")
    git(ctx.root, "commit", "-q", "-m", "masters")
    git(ctx.root, "update-ref", "refs/remotes/origin/main", "HEAD")
    root = str(ctx.root)
    assert main(["lint", "--root", root, "--select", "changelog-coverage"]) == 1
    assert "new entry, but no recipe key changed" in capsys.readouterr().out
    allowed = ["--select", "changelog-coverage", "--changelog-only-entries", "repeat"]
    assert main(["lint", "--root", root, *allowed]) == 0
    assert main(["lint", "--root", root, "--changelog-only-entries", "maybe"]) == 2
    assert "'maybe' is not one of forbid, repeat, match:REGEX" in capsys.readouterr().err


def test_lint_from_a_test_folder_judges_the_repository(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = changelog_repo(ENTRY_A, join(ENTRY_A, entry("a", pr_link="TBD")))
    (ctx.root / "utils").mkdir()
    monkeypatch.chdir(ctx.root / "utils")
    assert main(["lint", "--select", "changelog-pr-link"]) == 1
    assert "pr-link 'TBD' is not accepted" in capsys.readouterr().out


def test_a_warning_rule_prints_its_findings_and_keeps_exit_0(
    changelog_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = changelog_repo(ENTRY_A, ENTRY_A)
    shutil.copytree(Path(__file__).resolve().parents[2] / "recipes", ctx.root / "recipes")
    shutil.copytree(Path(__file__).resolve().parents[2] / "golden", ctx.root / "golden")
    argv = ["lint", "--root", str(ctx.root), "--select", "recipes-golden-uncommitted"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "warn recipes-golden-uncommitted:" in out
    assert "recipes/dsr1-fp4-b300-vllm.yaml:28: speedbench.golden: no committed golden" in out
    assert "finding(s)" not in out

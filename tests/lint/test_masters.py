"""Config keys from InferenceX's master configs (``configs/*-master.yaml``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.cli import main
from pytest_infx.lint.builtin import get_rule
from pytest_infx.lint.context import build_context
from pytest_infx.lint.findings import Finding
from pytest_infx.lint.masters import blocks
from pytest_infx.lint.scope import parse_diff, pull_request_from_env
from pytest_infx.settings import environment

from .helpers import entry, git, write_files

MASTER = """\
dsv4-fp4-b200-vllm:
  image: vllm/vllm-openai:v0.31.0
  # the tuned value
  conc: 64

# a comment about the next key is not part of the block above
glm5.2-fp8-b300-sglang:
  image: lmsysorg/sglang:v0.5.21
  conc: 32
"""


def run(rule_id: str, root: Path, **kwargs: object) -> list[Finding]:
    ctx = build_context(root, comment_files=(), **kwargs)  # type: ignore[arg-type]
    rule = get_rule(rule_id)
    assert rule.skip_reason(ctx) is None, rule.skip_reason(ctx)
    return rule.check(ctx)


def test_blocks_leave_out_blank_and_comment_lines() -> None:
    found = blocks(MASTER.encode(), Path("configs/nvidia-master.yaml"))
    assert list(found) == ["dsv4-fp4-b200-vllm", "glm5.2-fp8-b300-sglang"]
    assert found["glm5.2-fp8-b300-sglang"].line == 7
    assert found["dsv4-fp4-b200-vllm"].block == (
        b"dsv4-fp4-b200-vllm:\n  image: vllm/vllm-openai:v0.31.0\n  conc: 64\n"
    )


def test_config_keys_resolve_against_master_configs_with_wildcards(tmp_path: Path) -> None:
    log = entry("dsv4-fp4-b200-*") + "\n" + entry("glm5.2-fp8-b300-sglng", "kimik3-*")
    write_files(tmp_path, {"configs/nvidia-master.yaml": MASTER, "perf-changelog.yaml": log})
    found = run("changelog-config-keys", tmp_path)
    assert [(f.line, f.entry, f.message, f.hint) for f in found] == [
        (
            8,
            1,
            "config key 'glm5.2-fp8-b300-sglng' matches no config key.",
            "Did you mean 'glm5.2-fp8-b300-sglang'?",
        ),
        (9, 1, "config key 'kimik3-*' matches no config key.", "Check the recipe keys."),
    ]


def _repo(root: Path) -> Path:
    write_files(
        root,
        {
            "configs/nvidia-master.yaml": MASTER,
            "perf-changelog.yaml": entry("dsv4-fp4-b200-vllm", pr_link="XXX"),
            "benchmarks/dsv4.sh": "#!/usr/bin/env bash\nvllm serve\n",
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_a_changed_master_block_needs_an_entry(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    master = root / "configs/nvidia-master.yaml"
    master.write_text(MASTER.replace("conc: 32", "conc: 48"))
    (found,) = run("changelog-coverage", root, base_ref="HEAD")
    assert found.message == (
        "recipe key 'glm5.2-fp8-b300-sglang' changed since HEAD but no new entry covers it."
    )
    log = root / "perf-changelog.yaml"
    log.write_text(log.read_text() + "\n" + entry("glm5.2-fp8-*"))
    assert run("changelog-coverage", root, base_ref="HEAD") == []


def test_a_comment_above_the_next_key_changes_no_key(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    master = root / "configs/nvidia-master.yaml"
    master.write_text(MASTER.replace("# a comment", "# an edited comment"))
    assert run("changelog-coverage", root, base_ref="HEAD") == []


def test_an_entry_for_a_script_change_is_not_superfluous(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    log = root / "perf-changelog.yaml"
    log.write_text(log.read_text() + "\n" + entry("dsv4-fp4-b200-vllm"))
    (found,) = run("changelog-coverage", root, base_ref="HEAD")
    assert found.message == "new entry, but no recipe key changed since HEAD."
    (root / "benchmarks/dsv4.sh").write_text("#!/usr/bin/env bash\nvllm serve --port 1\n")
    assert run("changelog-coverage", root, base_ref="HEAD") == []


def test_parse_diff_names_the_written_lines() -> None:
    diff = (
        b"diff --git a/x.sh b/x.sh\nindex 1..2 100644\n--- a/x.sh\n+++ b/x.sh\n"
        b"@@ -3 +3,2 @@\n-a\n+b\n+c\n@@ -9,2 +10,0 @@\n-d\n-e\n"
        b"diff --git a/new.sh b/new.sh\nnew file mode 100644\n--- /dev/null\n+++ b/new.sh\n"
        b"@@ -0,0 +1 @@\n+x\n"
        b"diff --git a/gone.sh b/gone.sh\ndeleted file mode 100644\n--- a/gone.sh\n+++ /dev/null\n"
        b"@@ -1 +0,0 @@\n-x\n"
    )
    assert parse_diff(diff) == {"x.sh": frozenset({3, 4, 10}), "new.sh": None}


def test_the_pull_request_comes_from_github_actions() -> None:
    pull = {"GITHUB_ACTIONS": "true", "GITHUB_REF": "refs/pull/2707/merge"}
    assert pull_request_from_env(environment(pull)).number == 2707
    push = {"GITHUB_ACTIONS": "true", "GITHUB_REF": "refs/heads/main", "GITHUB_EVENT_NAME": "push"}
    assert pull_request_from_env(environment(push)).main
    assert pull_request_from_env(environment({"GITHUB_REF": "refs/pull/1/merge"})).number is None


def test_infx_changed_lists_master_config_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path)
    master = root / "configs/nvidia-master.yaml"
    master.write_text(MASTER.replace("conc: 32", "conc: 48") + "kimik3-fp4-b300-vllm:\n  conc: 8\n")
    (root / "configs/runners.yaml").write_text("b300:\n- b300-nv_0\n")
    monkeypatch.chdir(root)
    assert main(["changed", "--recipes", "configs", "--base", "HEAD"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "glm5.2-fp8-b300-sglang: changed (configs/nvidia-master.yaml:7)",
        "kimik3-fp4-b300-vllm: added (configs/nvidia-master.yaml:10)",
        "2 of 3 config keys changed since HEAD",
    ]
    assert main(["changed", "--recipes", "configs", "--base", "nope"]) == 2
    assert "git ref 'nope' does not exist" in capsys.readouterr().out


def test_infx_changed_on_a_tree_that_does_not_load_says_why_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_files(tmp_path, {"configs/x.yaml": "a: [1\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    monkeypatch.chdir(tmp_path)
    assert main(["changed", "--recipes", "configs", "--base", "HEAD"]) == 2
    assert capsys.readouterr().out.startswith("configs/x.yaml:2:1: invalid YAML")

"""The GitHub Actions workflow shipped in ``examples/`` runs, step by step, in a repository shaped
like InferenceX: its ``run:`` steps pass a clean pull request and stop a bad one at lint."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .helpers import repo_files
from .history import base_files, config_keys, git, render_entry

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-actions" / "infx.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")

UTILS_INI = """\
[pytest]
testpaths = .
python_files = test_*.py
addopts =
    -v
    --strict-markers
    --tb=short
infx_lint_root = ..
infx_recipes = ../recipes
infx_golden = ../golden_al_distribution
infx_scenario_types =
    fixed-seq-len
    agentic-coding
"""


def inferencex_like(repo: Path) -> str:
    """InferenceX's layout: changelog, master configs and collectors at the top, the pytest ini
    and tests that need packages CI does not install in ``utils/``, golden curves in
    ``golden_al_distribution/``; returns the base commit."""
    files = base_files(config_keys())
    for name, text in repo_files().items():
        files[name.replace("golden/", "golden_al_distribution/", 1)] = text
    files["utils/pytest.ini"] = UTILS_INI
    files["utils/test_process_result.py"] = "import pandas\n\ndef test_x():\n    pass\n"
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main")
    return git(repo, "rev-parse", "HEAD")


def pull_request(repo: Path, base: str, *, separator: str) -> None:
    git(repo, "checkout", "-q", "-B", "pr", base)
    key = "dsv4-fp4-b300-vllm"
    master = repo / "configs" / "nvidia-master.yaml"
    text = master.read_text()
    start = text.index("conc-end: 64", text.index(f"{key}:\n"))
    master.write_text(f"{text[:start]}conc-end: 96{text[start + len('conc-end: 64') :]}")
    log = repo / "perf-changelog.yaml"
    log.write_text(log.read_text() + separator + render_entry([key], "XXX"))
    git(repo, "commit", "-q", "-am", "bump dsv4 concurrency")


def run_workflow(repo: Path, base: str, tmp: Path) -> tuple[dict[str, str], str | None]:
    """Each job's ``run:`` steps in order, as the runner would (``needs`` honoured: a failed
    job stops the ones after it); returns each step that ran with its output, and the one
    that failed."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    known = {
        "github.event.pull_request.base.sha": base,
        "github.event.pull_request.number": "7",
        "secrets.INFX_DB_URL": f"sqlite:///{tmp / 'history.db'}",
    }
    environ = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "RUNNER_TEMP": str(tmp),
        "PIP_NO_INDEX": "1",
        "PIP_DRY_RUN": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    ran: dict[str, str] = {}
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            if "run" not in step:
                continue
            env = dict(environ)
            for key, value in step.get("env", {}).items():
                env[key] = _EXPRESSION.sub(lambda m: known[m.group(1)], str(value))
            folder = repo / step.get("working-directory", ".")
            done = subprocess.run(
                ["bash", "-e", "-c", step["run"]],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            label = f"{name}: {step['name']}"
            ran[label] = done.stdout + done.stderr
            if done.returncode != 0:
                return ran, label
    return ran, None


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "InferenceX"
    root.mkdir()
    return root, inferencex_like(root)


def test_the_shipped_workflow_passes_a_clean_pull_request(
    repo: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = repo
    pull_request(root, base, separator="\n")
    ran, failed = run_workflow(root, base, tmp_path)
    assert failed is None, ran
    assert list(ran) == [
        "lint: Install pytest-infx",
        "lint: Lint the pull request against its base",
        "speedbench: Install pytest-infx with its golden gate",
        "speedbench: Golden AL drift gate on the points the pull request changed",
        "agentic: Install pytest-infx with the PostgreSQL driver",
        "agentic: AgentX points the pull request changed, gated on main's latest results",
    ]
    linted = ran["lint: Lint the pull request against its base"]
    assert f"PR mode: judged the change since {base} in {root}" in linted
    assert "pandas" not in linted
    assert "infx-lint::golden-registry PASSED" in linted
    gated = ran["speedbench: Golden AL drift gate on the points the pull request changed"]
    assert "of unchanged recipe keys deselected" in gated
    agentic = ran["agentic: AgentX points the pull request changed, gated on main's latest results"]
    assert "of unchanged recipe keys deselected" in agentic


def test_the_shipped_workflow_stops_a_bad_pull_request_at_lint(
    repo: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = repo
    pull_request(root, base, separator="\n\n")
    ran, failed = run_workflow(root, base, tmp_path)
    assert failed == "lint: Lint the pull request against its base"
    assert "speedbench: Install pytest-infx with its golden gate" not in ran
    assert "perf-changelog.yaml:5032 (entry 720): 2 blank lines between entries." in ran[failed]

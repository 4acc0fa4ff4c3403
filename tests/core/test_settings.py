from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_infx.files.cachedir import cache_root
from pytest_infx.settings import environment

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_infx"
CHILD_ENVIRONMENTS = {
    "agentic/runner.py": "aiperf's environment",
    "engines/conformance.py": "the engine parser's environment",
    "engines/standins.py": "a recording stand-in's own, which it records",
    "engines/vllm_cpu.py": "the CPU engine's environment",
    "envs/toolenv.py": "pip's environment",
    "files/git.py": "git's environment",
    "launch/process.py": "the engine server's environment",
}


def _reads_environ(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                lines.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in ("environ", "getenv") for alias in node.names):
                lines.append(node.lineno)
    return lines


def test_the_environment_is_read_only_in_settings_and_where_a_child_s_is_built() -> None:
    found = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _reads_environ(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found.pop("settings.py")
    assert sorted(set(found) - set(CHILD_ENVIRONMENTS)) == []
    assert sorted(set(CHILD_ENVIRONMENTS) - set(found)) == [], "an allowance no longer needed"


def test_the_scanner_sees_each_way_of_reading_it() -> None:
    code = "import os\nfrom os import environ\nos.environ.get('A')\nos.getenv('B')\n"
    assert sorted(_reads_environ(ast.parse(code))) == [2, 3, 4]


def test_each_variable_is_read_and_an_empty_one_is_unset() -> None:
    env = environment(
        {
            "INFX_CACHE_DIR": "/c",
            "INFX_MAX_INPUT_MB": "",
            "RUNNER_NAME": "b200-nv_0",
            "GITHUB_REF": "refs/pull/7/merge",
            "GITHUB_STEP_SUMMARY": "/s.md",
            "SLURM_JOB_ID": "12",
            "CUDA_VISIBLE_DEVICES": "0,1",
            "HOME": "/h",
        }
    )
    assert (env.cache_dir, env.max_input_mb, env.runner_name) == ("/c", None, "b200-nv_0")
    assert env.step_summary == "/s.md"
    assert dict(env.github) == {"GITHUB_REF": "refs/pull/7/merge", "GITHUB_STEP_SUMMARY": "/s.md"}
    assert dict(env.slurm) == {"SLURM_JOB_ID": "12", "CUDA_VISIBLE_DEVICES": "0,1"}
    assert env.in_slurm_job and not environment({}).in_slurm_job
    assert cache_root(env=env) == Path("/c")


def test_the_current_environment_is_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    monkeypatch.delenv("INFX_CACHE_DIR", raising=False)
    assert cache_root() == Path("/x/pytest-infx")
    monkeypatch.setenv("INFX_CACHE_DIR", "/y")
    assert cache_root() == Path("/y")

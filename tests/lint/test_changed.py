from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_infx.lint.changed import changed_keys
from pytest_infx.lint.context import build_context
from pytest_infx.recipes.changes import changed_since
from pytest_infx.recipes.loader import read_tree

from .helpers import git

PROJECT_RECIPES = Path(__file__).resolve().parents[2] / "recipes"


@pytest.fixture
def recipe_repo(tmp_path: Path) -> Path:
    """A git repository whose ``origin/main`` holds the project's recipes."""
    repo = tmp_path / "repo"
    shutil.copytree(PROJECT_RECIPES, repo / "recipes")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    return repo


def _both(repo: Path) -> tuple[frozenset[str], frozenset[str]]:
    recipes = repo / "recipes"
    fast = changed_keys(repo, recipes, "origin/main", read_tree(recipes))
    full = frozenset(
        c.key for c in changed_since(repo, recipes, "origin/main") if c.status != "removed"
    )
    return fast, full


def test_nothing_changed(recipe_repo: Path) -> None:
    (recipe_repo / "notes.txt").write_text("unrelated\n")
    assert _both(recipe_repo) == (frozenset(), frozenset())


def test_a_base_change_an_added_recipe_a_removal_and_a_comment(recipe_repo: Path) -> None:
    recipes = recipe_repo / "recipes"
    base = recipes / "_base" / "smollm2-bf16-cpu-vllm.yaml"
    base.write_text(base.read_text().replace("concurrency: 8", "concurrency: 4"))
    ngram = (recipes / "smollm2-bf16-cpu-vllm-ngram.yaml").read_text()
    (recipes / "new.yaml").write_text(ngram.replace("-ngram\n", "-ngram2\n", 1))
    (recipes / "mimov2.6flash-fp4-b200-sglang-agentic.yaml").unlink()
    dflash = recipes / "mimov2.6flash-fp4-b300-vllm-dflash.yaml"
    dflash.write_text(dflash.read_text().replace("tp: 4\n", "tp: 4 # the DFlash head fits\n"))
    fast, full = _both(recipe_repo)
    assert (
        fast
        == full
        == {
            "smollm2-bf16-cpu-vllm-draft",
            "smollm2-bf16-cpu-vllm-ngram",
            "smollm2-bf16-cpu-vllm-ngram2",
        }
    )


def test_a_committed_change_and_an_agentic_point(recipe_repo: Path) -> None:
    path = recipe_repo / "recipes" / "mimov2.6flash-fp4-b200-vllm-agentic.yaml"
    path.write_text(path.read_text().replace("concurrency: [1, 4]", "concurrency: [1, 4, 8]"))
    git(recipe_repo, "commit", "-q", "-am", "tp8 c8")
    assert _both(recipe_repo) == (frozenset({"mimov2.6flash-fp4-b200-vllm-agentic"}),) * 2


def test_context_computes_changed_keys_only_when_asked(recipe_repo: Path) -> None:
    path = recipe_repo / "recipes" / "mimov2.6flash-fp4-b300-vllm-dflash.yaml"
    path.write_text(path.read_text().replace("concurrency: 32", "concurrency: 16"))
    ctx = build_context(recipe_repo, base_ref="origin/main", comment_files=())
    assert "changed" not in vars(ctx.derived)
    assert ctx.changed() == frozenset({"mimov2.6flash-fp4-b300-vllm-dflash"})
    no_base = build_context(recipe_repo, comment_files=())
    assert no_base.changed() is None


def test_changed_since_from_a_subfolder_of_the_repository(recipe_repo: Path) -> None:
    """InferenceX runs pytest from utils/, so the git calls start below the top level."""
    utils = recipe_repo / "utils"
    utils.mkdir()
    assert changed_since(utils, recipe_repo / "recipes", "origin/main") == []

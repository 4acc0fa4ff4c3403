from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_infx.cli import main
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all

REPO_RECIPES = Path(__file__).resolve().parents[2] / "recipes"
RECIPE = "dsr1-fp4-b300-vllm.yaml"


def _misnamed(tmp_path: Path) -> tuple[Path, int]:
    """A copy of the repository's recipes with one engine misspelt, and that line."""
    recipes = tmp_path / "recipes"
    shutil.copytree(REPO_RECIPES, recipes)
    path = recipes / RECIPE
    text = path.read_text()
    assert "\nengine:\n  env:" in text
    path.write_text(text.replace("\nengine:\n  env:", "\nengine:\n  name: vlm\n  env:"))
    line = path.read_text().splitlines().index("  name: vlm") + 1
    return recipes, line


def test_recipes_lists_every_point_of_the_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recipes", "--recipes", str(REPO_RECIPES)]) == 0
    lines = capsys.readouterr().out.splitlines()
    points = expand_all(load_tree(REPO_RECIPES))
    assert lines == [f"{p.id}\t{p.runner}\t{p.fingerprint}" for p in points]


def test_recipes_names_an_engine_no_adapter_answers_for_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipes, line = _misnamed(tmp_path)
    assert main(["recipes", "--recipes", str(recipes)]) == 2
    out = capsys.readouterr().out
    assert f"{recipes / RECIPE}:{line}" in out, out
    assert "engine.name: no engine 'vlm'; did you mean 'vllm'?" in out, out


def test_changed_checks_the_tree_as_it_is_now_with_the_engines_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recipes = tmp_path / "recipes"
    shutil.copytree(REPO_RECIPES, recipes)
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "recipes"],
    ):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    assert main(["changed", "--recipes", "recipes", "--base", "HEAD"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("0 of ")
    shutil.rmtree(recipes)
    _, line = _misnamed(tmp_path)
    assert main(["changed", "--recipes", "recipes", "--base", "HEAD"]) == 2
    out = capsys.readouterr().out
    assert f"recipes/{RECIPE}:{line}" in out, out
    assert "no engine 'vlm'" in out, out

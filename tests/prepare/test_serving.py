"""``--infx-plan`` prints what the launch runs: the same argv and environment, the synthetic
acceptance setting of a speculative AgentX point included."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from known_recipes import copy_recipes

from prepare.test_plan import plan_blocks
from pytest_infx.engines.registry import symbolic_paths
from pytest_infx.prepare import serving
from pytest_infx.prepare.plan import launch_plan
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all

REPO = Path(__file__).resolve().parents[2]


SPECULATIVE = """
  speculative:
    method: dflash
    draft-subfolder: dflash
    draft-length: 4
    golden: mimov2.6flash_dflash
"""
"""Gives a recipe's AgentX points draft length 4 (AL 3.35); the MiMo recipes' DFlash arms
(variant ``dflash``) keep their own draft length 3 (AL 2.97)."""


@pytest.mark.parametrize(
    ("recipe", "runner"),
    [
        ("mimov2.6flash-fp4-b200-sglang-agentic.yaml", "b200"),
        ("mimov2.6flash-fp4-b200-vllm-agentic.yaml", "b200"),
        ("smollm2-bf16-cpu-vllm-ngram.yaml", "cpu"),
    ],
)
def test_the_plan_is_the_launch(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, recipe: str, runner: str
) -> None:
    """Against an empty engine cache, so that the embedded recipe's plan is the same whether or
    not this machine's own cache holds the engine (the plan then names its python)."""
    monkeypatch.setenv("INFX_CACHE_DIR", str(pytester.path / "cache"))
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    shutil.copytree(REPO / "golden", pytester.path / "golden")
    root = pytester.path / "recipes"
    copy_recipes(root)
    path = root / recipe
    text = path.read_text()
    if "speculative:" not in text.split("agentic:", 1)[1].split("overrides:", 1)[0]:
        path.write_text(text.replace("agentic:\n", "agentic:" + SPECULATIVE, 1))
    result = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", runner)
    assert result.ret == 0, result.stdout.str()
    blocks = plan_blocks(result)
    points = [p for p in expand_all(load_tree(root)) if p.path == path and p.kind == "agentic"]
    assert points
    for point in points:
        block = blocks[point.id]
        paths = symbolic_paths(point)
        plan = launch_plan(point, paths, pytester.path / "golden")
        spec = serving.to_spec(plan, paths)
        assert shlex.split(block["argv"]) == list(spec.argv)
        shown = dict(pair.split("=", 1) for pair in shlex.split(block.get("env", "")))
        assert shown == dict(spec.env)
        al = "2.97" if point.variant == "dflash" else "3.35"
        if point.recipe.engine.name == "sglang":
            assert shown["SGLANG_SIMULATE_ACC_TOKEN_MODE"] == "real-draft-token"
            assert shown["SGLANG_SIMULATE_ACC_LEN"] == al
        elif point.recipe.engine.embedded:
            assert shown["HF_HUB_OFFLINE"] == "1"
        else:
            assert f'"synthetic_acceptance_length":{al}' in block["argv"]


def test_a_server_on_an_mi_runner_leases_amd_gpus(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    copy_recipes(root)
    path = root / "mimov2.6flash-fp4-b200-vllm-agentic.yaml"
    path.write_text(path.read_text() + "runner: mi300x\n")
    tree = [s for s in load_tree(root) if s.path == path]
    point = expand_all(tree)[0]
    assert point.runner == "mi300x"
    paths = symbolic_paths(point)
    spec = serving.to_spec(launch_plan(point, paths, REPO / "golden"), paths)
    assert spec.gpu_vendor == "amd"
    assert spec.gpus == point.tp
    ids = tuple(range(2, 2 + spec.gpus))
    argv, _ = spec.command(port=1, gpu_ids=ids, container_name="c")
    assert "--gpus" not in argv and "/dev/kfd" in argv
    assert f"ROCR_VISIBLE_DEVICES={','.join(map(str, ids))}" in argv

"""The repository's recipes that the engine-side tests were written against.

Tests that count points or commands copy these and leave out recipes added later, so the
counts they assert stay what they are while the recipe folder grows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

KNOWN_RECIPES = (
    "_base",
    "mimov2.6flash-fp4-b200-sglang-agentic.yaml",
    "mimov2.6flash-fp4-b200-vllm-agentic.yaml",
    "mimov2.6flash-fp4-b300-vllm-dflash.yaml",
    "smollm2-bf16-cpu-vllm-draft.yaml",
    "smollm2-bf16-cpu-vllm-ngram.yaml",
)


def copy_recipes(to: Path) -> None:
    def ignore(folder: str, names: list[str]) -> list[str]:
        top = Path(folder) == REPO / "recipes"
        return [name for name in names if top and name not in KNOWN_RECIPES]

    shutil.copytree(REPO / "recipes", to, ignore=ignore)


def longest_shipped_key() -> str:
    """The longest recipe key this repository ships: a label derived from it must still
    launch (the launcher bounds a label's length)."""
    from pytest_infx.recipes.source import load_yaml

    keys = [str(load_yaml(path)["key"]) for path in (REPO / "recipes").glob("*.yaml")]
    return max(keys, key=len)

"""Recipe builders for the core tests.

Recipes are built as plain dicts and dumped to YAML, so a test changes one field by editing
one key and finds the line an error must name by searching the dumped text.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

Recipe = dict[str, Any]


def model(prefix: str = "mimov2.6flash") -> dict[str, Any]:
    return {
        "hub-id": "XiaomiMiMo/MiMo-V2.6-Flash-RL",
        "served-name": "mimo-v2.6-flash-rl",
        "prefix": prefix,
        "precision": "fp4",
        "kv-heads": 4,
    }


def speedbench(
    key: str,
    *,
    runner: str = "b300",
    draft_lengths: Iterable[int] = (1, 3),
    modes: Iterable[str] = ("thinking_off", "thinking_on"),
    tp: int = 4,
    engine: str = "vllm",
) -> Recipe:
    return {
        "key": key,
        "model": model(),
        "runner": runner,
        "engine": {
            "name": engine,
            "version": "v0.31.0",
            "image": f"{engine}/{engine}-openai:v0.31.0@sha256:{'c1' * 32}",
            "args": {"max-num-batched-tokens": 16384, "reasoning-parser": "mimo"},
            "env": {"VLLM_USE_V1": "1"},
        },
        "tp": tp,
        "speedbench": {
            "speculative": {"method": "dflash", "draft-subfolder": "dflash", "block-size": 8},
            "draft-lengths": list(draft_lengths),
            "thinking-modes": {mode: {"enable_thinking": mode == "thinking_on"} for mode in modes},
            "sampling": {"temperature": 1.0, "top-p": 0.95},
            "concurrency": 32,
            "dataset": {"category": "coding"},
            "output-len": 4096,
            "golden": "mimov2.6flash_dflash",
        },
    }


def agentic(
    key: str,
    *,
    runner: str = "b200",
    points: Mapping[int, Iterable[int]] | None = None,
    engine: str = "sglang",
) -> Recipe:
    chosen = points if points is not None else {4: (1, 4, 8, 16, 32), 2: (1, 4, 8)}
    return {
        "key": key,
        "model": model(),
        "runner": runner,
        "engine": {
            "name": engine,
            "version": "v0.5.21-cu130",
            "image": f"lmsysorg/{engine}:v0.5.21-cu130@sha256:{'b1' * 32}",
            "args": {"mem-fraction-static": 0.85, "reasoning-parser": "mimo"},
        },
        "agentic": {
            "points": [{"tp": tp, "concurrency": list(c)} for tp, c in chosen.items()],
            "duration": 1800,
            "seed": 42,
        },
    }


def dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def write(path: Path, data: Recipe | str) -> Path:
    """Write a recipe (dict or YAML text) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else dump(data), encoding="utf-8")
    return path


def changed(recipe: Recipe, dotted: str, value: Any) -> Recipe:
    """A deep copy of ``recipe`` with the field at ``a.b.c`` set to ``value``."""
    out = copy.deepcopy(recipe)
    node = out
    *parents, last = dotted.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    return out


def line_of(text: str, needle: str) -> int:
    """The first 1-based line of ``text`` that holds ``needle``."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert found, f"{needle!r} not in the YAML"
    return found[0]

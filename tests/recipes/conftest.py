from __future__ import annotations

import functools
from pathlib import Path

from pytest_infx.engines.base import ServerPlan
from pytest_infx.prepare.plan import client_settings, server_plan
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_OWNED = {"--max-num-seqs", "--max-running-requests", "--cuda-graph-max-bs"}
"""Flags whose value the plugin sets per point (admission) rather than the recipe."""
PLUGIN_FLAGS = {"--per-request-spec-decode-metrics", "--enable-metrics"}
"""Bare flags the engine adapters add for the plugin's own measurements."""


@functools.cache
def repository_points() -> dict[str, Point]:
    return {p.id: p for p in expand_all(load_tree(ROOT / "recipes"))}


def planned(point_id: str) -> tuple[Point, ServerPlan]:
    point = repository_points()[point_id]
    return point, server_plan(point, ROOT / "golden")


def recipe_argv(plan: ServerPlan, *, agentic: bool = False) -> list[str]:
    """The plan's argv less the command, the plugin-owned model/address/TP flags, the plugin's
    own metrics flags and, for an agentic point, the admission the plugin sets per point: what
    the recipe and its speculative block put there."""
    argv = list(plan.argv)
    out: list[str] = []
    index = argv.index("--tensor-parallel-size" if plan.engine == "vllm" else "--tp-size") + 2
    while index < len(argv):
        flag = argv[index]
        if agentic and (flag in PLUGIN_OWNED or flag.startswith("--cuda-graph-max-bs")):
            index += 2
            continue
        if flag in PLUGIN_FLAGS:
            index += 1
            if index < len(argv) and not argv[index].startswith("--"):
                index += 1
            continue
        out.append(flag)
        index += 1
    return out


def client(point_id: str) -> dict[str, object]:
    return client_settings(repository_points()[point_id])


def flags(plan: ServerPlan, *, agentic: bool = False) -> dict[str, object]:
    """``recipe_argv`` as flag -> value (``None`` for a bare flag; JSON values parsed), so a
    test states the script's flags without depending on their order."""
    import json

    argv = recipe_argv(plan, agentic=agentic)
    out: dict[str, object] = {}
    index = 0
    while index < len(argv):
        flag = argv[index]
        value: object = None
        if index + 1 < len(argv) and not argv[index + 1].startswith("--"):
            raw = argv[index + 1]
            value = json.loads(raw) if raw[:1] in "{[" else raw
            index += 1
        assert flag not in out, f"{flag} given twice"
        out[flag] = value
        index += 1
    return out

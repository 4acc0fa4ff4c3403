"""Engine name -> adapter, and the symbolic model paths shown by the plan."""

from __future__ import annotations

import posixpath

from pytest_infx.engines.base import EngineAdapter, ModelPaths, PlanError, is_embedded, speculation
from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.recipes.points import Point

ADAPTERS: dict[str, EngineAdapter] = {"vllm": VllmAdapter(), "sglang": SglangAdapter()}


def adapter_for(point: Point) -> EngineAdapter:
    name = point.recipe.engine.name
    try:
        return ADAPTERS[name]
    except KeyError:
        raise PlanError(
            f"{point.id}: pytest-infx cannot launch {name} servers yet (supported: "
            f"{', '.join(sorted(ADAPTERS))}); {name} is supported for synthetic acceptance only"
        ) from None


def symbolic_paths(point: Point) -> ModelPaths:
    """Model paths as the plan shows them before anything is staged or installed."""
    model = point.recipe.model
    target = model.path or f"$MODEL_ROOT/{posixpath.basename(model.hub_id)}"
    spec, _ = speculation(point)
    draft = None
    if spec is not None:
        if spec.draft_subfolder:
            draft = f"{target}/{spec.draft_subfolder}"
        elif spec.draft:
            draft = (
                spec.draft
                if is_embedded(spec.draft) or spec.draft.startswith("/")
                else (f"$MODEL_ROOT/{posixpath.basename(spec.draft)}")
            )
    return ModelPaths(target, draft)

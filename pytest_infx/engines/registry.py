"""Engine name -> adapter, and the symbolic model paths shown by the plan.

pytest-infx's own adapters (vLLM, SGLang) are joined by those that other packages provide
(:mod:`pytest_infx.engines.extensions`): one name, one adapter, and a name no recipe can use is
refused, so a typo in a provider fails at once rather than when a recipe needs it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import cast, get_args

from pytest_infx.engines import extensions
from pytest_infx.engines.base import EngineAdapter, ModelPaths, PlanError, is_embedded, speculation
from pytest_infx.engines.extensions import GROUP, HOOK, EngineRegistrationError
from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import EngineName

BUILTIN: Mapping[str, EngineAdapter] = {"vllm": VllmAdapter(), "sglang": SglangAdapter()}
_REQUIRED = ("plan", "rendered_prompt")

_merged: dict[int, dict[str, EngineAdapter]] = {}


def adapters() -> Mapping[str, EngineAdapter]:
    """Every adapter by engine name, pytest-infx's own and the provided ones; the providers are
    asked again only when a pytest run's hooks came or went."""
    version = extensions.version()
    found = _merged.get(version)
    if found is None:
        _merged.clear()
        found = _merged[version] = _merge()
    return found


def _merge() -> dict[str, EngineAdapter]:
    merged = dict(BUILTIN)
    sources = {name: "pytest-infx itself" for name in BUILTIN}
    known = get_args(EngineName)
    for offer in extensions.provided():
        adapter = _adapter(offer.source, offer.value)
        if adapter.name in merged:
            raise EngineRegistrationError(
                f"{offer.source}: engine {adapter.name!r} is already provided by "
                f"{sources[adapter.name]}; uninstall one of them or drop it from the hook"
            )
        if adapter.name not in known:
            raise EngineRegistrationError(
                f"{offer.source}: engine {adapter.name!r} can never be used: recipes name "
                f"their engine as one of {', '.join(known)}"
            )
        merged[adapter.name] = adapter
        sources[adapter.name] = offer.source
    return merged


def _adapter(source: str, value: object) -> EngineAdapter:
    """An adapter instance from what a provider gave: an instance, or a class to instantiate."""
    candidate = value() if isinstance(value, type) else value
    name = getattr(candidate, "name", None)
    lacks = [] if isinstance(name, str) and name else ["a str `name`"]
    lacks += [f"`{attr}()`" for attr in _REQUIRED if not callable(getattr(candidate, attr, None))]
    if lacks:
        raise EngineRegistrationError(
            f"{source}: {value!r} is not an engine adapter: it lacks {', '.join(lacks)} "
            "(see pytest_infx.engines.base.EngineAdapter)"
        )
    return cast(EngineAdapter, candidate)


def adapter_for(point: Point) -> EngineAdapter:
    name = point.recipe.engine.name
    found = adapters()
    try:
        return found[name]
    except KeyError:
        raise PlanError(
            f"{point.id}: pytest-infx cannot launch {name} servers (adapters: "
            f"{', '.join(sorted(found))}); {name} is supported for synthetic acceptance only "
            f"unless a package provides an adapter (entry point group {GROUP} or the {HOOK} "
            "hook)"
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

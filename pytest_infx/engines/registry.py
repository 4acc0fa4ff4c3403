"""Engine name -> adapter as one value, and the symbolic model paths shown by the plan.

pytest-infx's own adapters (vLLM, SGLang, ATOM, TensorRT-LLM) are joined by those that other
packages provide (:mod:`pytest_infx.engines.extensions`): one name, one adapter, and a name no
recipe can use is refused, so a typo in a provider fails at once rather than when a recipe needs
it. A pytest run builds its :class:`EngineRegistry` once, with its own hook implementations, and
passes it down; the ``infx`` commands use :func:`installed`, which has the installed packages'
adapters only.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from pytest_infx.engines import extensions
from pytest_infx.engines.atom import AtomAdapter
from pytest_infx.engines.base import (
    Defaults,
    EngineAdapter,
    ModelPaths,
    ParserEnv,
    PlanError,
    ServerPlan,
    is_embedded,
    speculation,
)
from pytest_infx.engines.extensions import GROUP, HOOK, EngineRegistrationError
from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.spec import (
    RequestSpecMetrics,
    Snapshot,
    SpecCounters,
    SyntheticSetting,
)
from pytest_infx.engines.trtllm import TrtllmAdapter
from pytest_infx.engines.vllm import LLAMACPP_PREFIX, VllmAdapter, read_counters
from pytest_infx.recipes.owned import EngineRules
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import Recipe

BUILTIN: Mapping[str, EngineAdapter] = {
    "vllm": VllmAdapter(),
    "sglang": SglangAdapter(),
    "atom": AtomAdapter(),
    "trtllm": TrtllmAdapter(),
}
ENGINES: Final[tuple[str, ...]] = tuple(BUILTIN)
"""Every engine pytest-infx itself knows; a package may provide more (:func:`engine_names`)."""
_REQUIRED = ("plan", "rendered_prompt")
_OPTIONAL = (
    "synthetic",
    "spec_counters",
    "spec_iterations",
    "request_fields",
    "request_spec",
    "attention_tp",
    "parser_env",
    "option_set",
    "dp_attention",
    "owned_flags",
    "parallelism",
    "speculative_block",
)


def _merge(offers: Iterable[extensions.Provided[object]]) -> dict[str, EngineAdapter]:
    merged = dict(BUILTIN)
    sources = {name: "pytest-infx itself" for name in BUILTIN}
    for offer in offers:
        adapter = _adapter(offer.source, offer.value)
        if adapter.name in merged:
            raise EngineRegistrationError(
                f"{offer.source}: engine {adapter.name!r} is already provided by "
                f"{sources[adapter.name]}; uninstall one of them or drop it from the hook"
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
    return Completed(candidate)


class Completed(Defaults):
    """A provided adapter, with :class:`Defaults` answering what it does not implement, so the
    rest of pytest-infx can call every method of :class:`EngineAdapter`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        framework = getattr(inner, "inferencex_framework", None)
        self.inferencex_framework = framework if isinstance(framework, str) else None
        self.lowercase_methods = getattr(inner, "lowercase_methods", False) is True
        self.iteration_stats = getattr(inner, "iteration_stats", False) is True
        self.plan: Callable[..., ServerPlan] = inner.plan
        self.rendered_prompt: Callable[..., Coroutine[Any, Any, str | None]] = inner.rendered_prompt
        for attr in _OPTIONAL:
            own = getattr(inner, attr, None)
            if callable(own):
                setattr(self, attr, own)


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


@dataclass(frozen=True)
class EngineRegistry:
    """Every adapter by engine name, pytest-infx's own and the provided ones, for one run."""

    adapters: Mapping[str, EngineAdapter] = field(default_factory=lambda: MappingProxyType(BUILTIN))

    def adapter_for(self, point: Point) -> EngineAdapter:
        name = point.recipe.engine.name
        try:
            return self.adapters[name]
        except KeyError:
            raise PlanError(
                f"{point.id}: no adapter launches {name} servers in this run (adapters: "
                f"{', '.join(sorted(self.adapters))}); install the package that provides it "
                f"(entry point group {GROUP} or the {HOOK} hook)"
            ) from None

    def engine_names(self) -> tuple[str, ...]:
        """Every engine a recipe may name: those with an adapter, pytest-infx's own and the
        provided ones."""
        return tuple(self.adapters)

    def engine_rules(self) -> EngineRules:
        """What loading a recipe checks against: the engine names, the embedded engine's, and
        each adapter's owned flags."""
        # the tool-environment machinery loads only when recipes are checked, never for a plan
        from pytest_infx.engines import embedded

        found = self.adapters
        return EngineRules(
            engines=self.engine_names(),
            embedded=(embedded.NAME,),
            owned={name: adapter.owned_flags(agentic=False) for name, adapter in found.items()},
            agentic={name: adapter.owned_flags(agentic=True) for name, adapter in found.items()},
            lowercase_methods=frozenset(
                name for name, adapter in found.items() if adapter.lowercase_methods
            ),
        )

    def inferencex_frameworks(self) -> dict[str, str]:
        """Engine name -> its InferenceX framework name, for the engines InferenceX runs."""
        return {
            name: adapter.inferencex_framework
            for name, adapter in self.adapters.items()
            if adapter.inferencex_framework is not None
        }

    def synthetic_setting(self, engine: str, al: float, k: int) -> SyntheticSetting:
        """The engine's way to force acceptance length ``al`` with ``k`` draft tokens."""
        if k < 1:
            raise ValueError(f"draft length k={k} must be at least 1")
        if not 1.0 <= al <= k + 1:
            raise ValueError(
                f"synthetic acceptance length {al} must lie in [1, {k + 1}] for k={k} "
                "(AL counts the bonus token); check the golden curve and the draft length"
            )
        adapter = self.adapters.get(engine)
        if adapter is not None:
            return adapter.synthetic(al, k)
        raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(self.engine_names())}")

    def synthetic_knobs(self) -> tuple[str, ...]:
        """Every name under which an engine's synthetic setting writes the acceptance length
        (environment variables, speculative-config keys, flags), so a recipe that writes one
        by hand can be found."""
        names: set[str] = set()
        for engine in ENGINES:
            try:
                setting = self.synthetic_setting(engine, 2.5, 3)
            except (PlanError, ValueError):
                continue
            names.update(key for key, value in setting.env.items() if _number(value))
            names.update(key for key, value in setting.spec_config.items() if _number(value))
            names.update(
                flag.lstrip("-")
                for flag, value in zip(setting.argv, setting.argv[1:], strict=False)
                if flag.startswith("-") and _number(value)
            )
        return tuple(sorted(names))

    def spec_counters(self, snapshot: Snapshot, engine: str | None = None) -> SpecCounters:
        """The counters of ``engine`` in a scrape, or, without one, of whichever adapter finds
        its series (llama.cpp's server exposes vLLM's counters under its own prefix)."""
        if engine is not None:
            adapter = self.adapters.get(engine)
            if adapter is None:
                return SpecCounters(engine=None, empty=not snapshot.series)
            return adapter.spec_counters(snapshot)
        if not snapshot.series:
            return SpecCounters(engine=None, empty=True)
        for adapter in self.adapters.values():
            found = adapter.spec_counters(snapshot)
            if found.speculating:
                return found
        llamacpp = read_counters(snapshot, LLAMACPP_PREFIX, "llamacpp")
        return llamacpp if llamacpp.speculating else SpecCounters(engine=None)

    def request_spec(self, frame: Mapping[str, object]) -> RequestSpecMetrics | None:
        """One request's speculative figures from a frame of whichever engine sent it."""
        for adapter in self.adapters.values():
            found = adapter.request_spec(frame)
            if found is not None:
                return found
        return None

    def attention_tp(self, recipe: Recipe, tp: int) -> int | None:
        adapter = self.adapters.get(recipe.engine.name)
        return None if adapter is None else adapter.attention_tp(recipe, tp)

    def parser_env(self, recipe: Recipe) -> ParserEnv | None:
        adapter = self.adapters.get(recipe.engine.name)
        return None if adapter is None else adapter.parser_env(recipe.engine.version)


def build(hooks: Sequence[extensions.HookImpl] = ()) -> EngineRegistry:
    """The registry of pytest-infx's adapters, the installed packages' and those of a pytest
    run's ``hooks``; EngineRegistrationError names a provider that gave something unusable."""
    return EngineRegistry(MappingProxyType(_merge(extensions.provided(hooks))))


@functools.cache
def installed() -> EngineRegistry:
    """The registry outside a pytest run: pytest-infx's adapters and the installed packages'
    (their entry points cannot change while a process runs)."""
    return build()


def _number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    try:
        float(str(value))
    except ValueError:
        return False
    return True

"""What every engine adapter provides: the launch plan for one point's server, and the way (if
any) to ask that server how it renders a chat request.

A plan is a plain value. Two points with equal plans share one server (thinking on and off at
one draft length, or agentic points of two recipes launched alike), so the plan must hold
everything that makes a server different and nothing that does not (the port is chosen at
launch and appears in argv as the literal ``{port}``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_infx.recipes.owned import canonical, owner
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import EMBEDDED_PREFIX, Speculative

PORT_TOKEN = "{port}"


class PlanError(ValueError):
    """A point cannot be turned into a server command; the message says why and what to do."""


@dataclass(frozen=True)
class ModelPaths:
    """Where the target and draft checkpoints are, as the server will see them."""

    target: str
    draft: str | None = None


@dataclass(frozen=True)
class ServerPlan:
    engine: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    preferred_port: int
    health_path: str
    gpus: int
    image: str | None
    ready_timeout_s: float
    served_model: str
    label: str
    key: str = field(default="")

    def with_key(self) -> ServerPlan:
        material = json.dumps(
            [self.engine, self.argv, sorted(self.env.items()), self.image, self.gpus],
            separators=(",", ":"),
        )
        digest = hashlib.sha256(material.encode()).hexdigest()[:16]
        return ServerPlan(**{**self.__dict__, "key": digest})


class RenderError(RuntimeError):
    """The server was asked how it renders a chat request and gave no usable answer."""


class EngineAdapter(Protocol):
    name: str

    def plan(
        self,
        point: Point,
        paths: ModelPaths,
        *,
        synthetic: Any = None,
        embedded_python: str | None = None,
    ) -> ServerPlan: ...

    async def rendered_prompt(
        self,
        base_url: str,
        *,
        model: str,
        messages: Sequence[Mapping[str, str]],
        chat_template_kwargs: Mapping[str, Any] | None,
        timeout_s: float = 60.0,
    ) -> str | None:
        """The prompt text the server builds from this chat request, or None when the engine
        has no way to show it (the rendered-prompt check is then skipped).

        A thinking switch lost on the way to the template changes what is measured without any
        error, and only the server's own rendering shows it. Raises `RenderError` when the
        server has a way but it failed.
        """


def flags(args: Mapping[str, Any], *, key: str) -> list[str]:
    """Recipe ``args`` as argv: ``true`` is a bare flag, mappings and lists become JSON."""
    out: list[str] = []
    for name in args:
        if name.startswith("-"):
            raise PlanError(f"{key}: engine.args.{name}: write flag names without leading dashes")
        setter = owner(name, agentic=False)
        if setter is not None:
            raise PlanError(
                f"{key}: engine.args.{name} is set by pytest-infx from {setter};"
                " remove it from args"
            )
        value = args[name]
        if value is None or value is False:
            continue
        out.append(f"--{name}")
        if value is True:
            continue
        if isinstance(value, dict | list):
            out.append(json.dumps(value, separators=(",", ":"), sort_keys=True))
        else:
            out.append(str(value))
    return out


def admission_limit(point: Point) -> int | None:
    """Max running requests for an agentic server: factor x this point's concurrency.

    InferenceX sizes each point's server for its own concurrency (subagent fan-out can exceed
    it); a server sized for a larger one would admit more at once and change what a low
    concurrency measures.
    """
    agentic = point.recipe.agentic
    if point.kind != "agentic" or agentic is None:
        return None
    ranks = 1
    if point.recipe.engine.name == "vllm":
        # vLLM's max-num-seqs holds per data-parallel rank; InferenceX divides 2 x CONC by it.
        args = {canonical(name): value for name, value in point.recipe.engine.args.items()}
        size = args.get("data-parallel-size", args.get("dp", 1))
        ranks = size if isinstance(size, int) and not isinstance(size, bool) and size > 1 else 1
    return max(1, math.ceil(agentic.admission_factor * point.concurrency / ranks))


def is_embedded(path: str | None) -> bool:
    return path is not None and path.startswith(EMBEDDED_PREFIX)


def speculation(point: Point) -> tuple[Speculative | None, int | None]:
    """The speculative settings and draft length a point's server runs with, if any."""
    recipe = point.recipe
    if point.kind == "speedbench" and recipe.speedbench is not None:
        return recipe.speedbench.speculative, point.draft_length
    if point.kind == "agentic" and recipe.agentic is not None and recipe.agentic.speculative:
        return recipe.agentic.speculative, recipe.agentic.speculative.draft_length
    return None, None


def make_plan(
    engine: str, point: Point, argv: list[str], env: Mapping[str, str], k: int | None
) -> ServerPlan:
    """The plan fields every adapter fills the same way; the adapter owns argv and env."""
    recipe = point.recipe
    suffix = f"k{k}" if point.kind == "speedbench" else f"tp{point.tp}-c{point.concurrency}"
    return ServerPlan(
        engine=engine,
        argv=tuple(argv),
        env=dict(env),
        preferred_port=recipe.engine.port,
        health_path="/health",
        gpus=0 if recipe.runner == "cpu" else point.tp,
        image=recipe.engine.image,
        ready_timeout_s=recipe.engine.ready_timeout,
        served_model=recipe.model.served_name,
        label=f"{point.recipe_key}-{suffix}",
    ).with_key()

"""The plan: what each item would launch and send, without launching anything.

It uses the same adapters as the real run, with symbolic model paths, so what the plan shows is
what the server fixture will start once checkpoints are resolved.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pytest_infx.engines.base import PlanError, ServerPlan
from pytest_infx.engines.registry import adapter_for, symbolic_paths
from pytest_infx.recipes.points import Point
from pytest_infx.secrets import shown_argv, shown_value


def server_plan(point: Point) -> ServerPlan:
    return adapter_for(point).plan(point, symbolic_paths(point))


def server_key(point: Point) -> str:
    try:
        return server_plan(point).key
    except PlanError:
        return f"unplannable:{point.id}"


def client_settings(point: Point) -> dict[str, Any]:
    recipe = point.recipe
    if point.kind == "speedbench" and recipe.speedbench is not None:
        bench = recipe.speedbench
        assert point.thinking is not None
        return {
            "endpoint": "/v1/chat/completions",
            "stream": True,
            "concurrency": bench.concurrency,
            "max_tokens": bench.output_len,
            "sampling": bench.sampling.model_dump(exclude_none=True),
            "chat_template_kwargs": bench.thinking_modes[point.thinking],
            "dataset": bench.dataset.model_dump(by_alias=True, exclude_none=True),
        }
    assert recipe.agentic is not None
    agentic = recipe.agentic
    return {
        "client": "aiperf",
        "concurrency": point.concurrency,
        "duration_s": agentic.duration,
        "seed": agentic.seed,
        "trajectory_start_ratio": agentic.trajectory_start_ratio,
        "request_count": agentic.request_count,
        "traces": agentic.traces,
        "failed_request_threshold": agentic.failed_request_threshold,
    }


def golden_of(point: Point) -> str | None:
    recipe = point.recipe
    if point.kind == "speedbench" and recipe.speedbench is not None:
        return recipe.speedbench.golden
    if recipe.agentic is not None and recipe.agentic.speculative is not None:
        return recipe.agentic.speculative.golden
    return None


def render(point: Point, root: Path | None = None) -> list[str]:
    where = point.path
    if root is not None and point.path.is_relative_to(root):
        where = point.path.relative_to(root)
    lines = [f"{point.id}  (fingerprint {point.fingerprint}, {where}:{point.line})"]
    try:
        plan = server_plan(point)
    except PlanError as exc:
        return [*lines, f"  server: cannot plan: {exc}"]
    runtime = f"image {plan.image}" if plan.image else "local process"
    lines.append(
        f"  server {plan.key} ({plan.engine}, {runtime}, {plan.gpus} GPU(s), "
        f"port {plan.preferred_port} preferred)"
    )
    lines.append(f"    argv: {shlex.join(shown_argv(plan.argv))}")
    if plan.env:
        shown = (f"{k}={shlex.quote(shown_value(k, v))}" for k, v in sorted(plan.env.items()))
        lines.append("    env: " + " ".join(shown))
    lines.append("  client: " + json.dumps(client_settings(point), sort_keys=True))
    golden = golden_of(point)
    if golden:
        lines.append(f"  golden: {golden}")
    return lines

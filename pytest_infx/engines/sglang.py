"""SGLang: ``python3 -m sglang.launch_server``.

SGLang answers 503 while starting. Its ``/health`` normally runs a one-token generation, which
would add to the speculative counters between our snapshots, so the server is started with that
generation turned off. Draft length k maps to ``--speculative-num-steps k`` and
``--speculative-num-draft-tokens k+1`` with top-k 1 (SGLang forces that relation); DFlash has a
single step and takes the block through num-draft-tokens. SGLang's ``/tokenize`` takes text, not
chat messages, so the server cannot show how it templates a request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_infx.engines.base import (
    ModelPaths,
    ServerPlan,
    admission_limit,
    flags,
    make_plan,
    speculation,
)
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import Speculative

IMAGE_COMMAND = ("python3", "-m", "sglang.launch_server")
QUIET_HEALTH = {"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "false"}


def speculative_flags(spec: Speculative, k: int, draft: str | None) -> list[str]:
    method = spec.method.upper()
    argv = ["--speculative-algorithm", method]
    if draft is not None:
        argv += ["--speculative-draft-model-path", draft]
    if method == "DFLASH":
        argv += ["--speculative-num-draft-tokens", str(k + 1)]
    else:
        argv += ["--speculative-num-steps", str(k), "--speculative-eagle-topk", "1"]
        argv += ["--speculative-num-draft-tokens", str(k + 1)]
    for name, value in spec.settings.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv


class SglangAdapter:
    name = "sglang"

    def plan(
        self,
        point: Point,
        paths: ModelPaths,
        *,
        synthetic: Any = None,
        embedded_python: str | None = None,
    ) -> ServerPlan:
        recipe = point.recipe
        engine = recipe.engine
        argv = list(engine.command) if engine.command is not None else list(IMAGE_COMMAND)
        argv += ["--model-path", paths.target, "--served-model-name", recipe.model.served_name]
        argv += ["--host", "127.0.0.1", "--port", "{port}", "--tp-size", str(point.tp)]
        argv += ["--enable-metrics"]
        argv += flags(engine.args, key=recipe.key)
        env = {**QUIET_HEALTH, **engine.env}
        spec, k = speculation(point)
        if spec is not None and k is not None:
            argv += speculative_flags(spec, k, paths.draft)
            if synthetic is not None:
                env.update(synthetic.env)
        limit = admission_limit(point)
        if limit is not None:
            argv += ["--max-running-requests", str(limit), "--cuda-graph-max-bs", str(limit)]
        return make_plan(self.name, point, argv, env, k)

    async def rendered_prompt(
        self,
        base_url: str,
        *,
        model: str,
        messages: Sequence[Mapping[str, str]],
        chat_template_kwargs: Mapping[str, Any] | None,
        timeout_s: float = 60.0,
    ) -> None:
        """No way to ask: the rendered-prompt check is skipped and the output check still runs."""
        return None

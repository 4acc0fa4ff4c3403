"""vLLM: ``vllm serve`` in an image, a local command, or the embedded CPU engine.

vLLM refuses connections until it is ready and then answers ``/health`` with 200, so readiness
is a plain health poll. Speculation is one ``--speculative-config`` JSON whose
``num_speculative_tokens`` is the point's draft length.
"""

from __future__ import annotations

import json
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

IMAGE_COMMAND = ("vllm", "serve")
EMBEDDED_MODULE = "vllm.entrypoints.openai.api_server"


def speculative_config(
    spec: Speculative, k: int, draft: str | None, synthetic: dict[str, Any] | None = None
) -> dict[str, Any]:
    config: dict[str, Any] = {"method": spec.method, "num_speculative_tokens": k}
    if draft is not None:
        config["model"] = draft
    config.update(spec.settings)
    if synthetic:
        config.update(synthetic)
    return config


class VllmAdapter:
    name = "vllm"

    def command(self, point: Point, embedded_python: str | None) -> list[str]:
        engine = point.recipe.engine
        if engine.command is not None:
            return list(engine.command)
        if engine.embedded is not None:
            return [embedded_python or "python", "-m", EMBEDDED_MODULE]
        return list(IMAGE_COMMAND)

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
        argv = self.command(point, embedded_python)
        argv += ["--model", paths.target, "--served-model-name", recipe.model.served_name]
        argv += ["--host", "127.0.0.1", "--port", "{port}"]
        argv += ["--tensor-parallel-size", str(point.tp)]
        argv += flags(engine.args, key=recipe.key)
        env = dict(engine.env)
        spec, k = speculation(point)
        if spec is not None and k is not None:
            extra = dict(synthetic.spec_config) if synthetic is not None else None
            if synthetic is not None:
                env.update(synthetic.env)
            config = speculative_config(spec, k, paths.draft, extra)
            argv += ["--speculative-config", json.dumps(config, separators=(",", ":"))]
        limit = admission_limit(point)
        if limit is not None:
            argv += ["--max-num-seqs", str(limit)]
        return make_plan(self.name, point, argv, env, k)

"""vLLM: ``vllm serve`` in an image, a local command, or the embedded CPU engine.

vLLM refuses connections until it is ready and then answers ``/health`` with 200, so readiness
is a plain health poll. Speculation is one ``--speculative-config`` JSON whose
``num_speculative_tokens`` is the point's draft length. ``/tokenize`` accepts chat messages and
applies the chat template as a chat request would, so the rendered prompt can be read back
through ``/detokenize`` without generating anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_infx.engines.base import (
    ModelPaths,
    RenderError,
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

    async def rendered_prompt(
        self,
        base_url: str,
        *,
        model: str,
        messages: Sequence[Mapping[str, str]],
        chat_template_kwargs: Mapping[str, Any] | None,
        timeout_s: float = 60.0,
    ) -> str:
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in messages],
            "add_generation_prompt": True,
        }
        if chat_template_kwargs is not None:
            body["chat_template_kwargs"] = dict(chat_template_kwargs)
        base = base_url.rstrip("/")
        tokenized = await _post_json(base, "/tokenize", body, timeout_s)
        tokens = tokenized.get("tokens")
        if not isinstance(tokens, list):
            raise RenderError(f"POST {base}/tokenize: response has no 'tokens' list")
        detok = await _post_json(base, "/detokenize", {"model": model, "tokens": tokens}, timeout_s)
        prompt = detok.get("prompt")
        if not isinstance(prompt, str):
            raise RenderError(f"POST {base}/detokenize: response has no 'prompt' string")
        return prompt


async def _post_json(
    base: str, path: str, body: Mapping[str, Any], timeout_s: float
) -> dict[str, Any]:
    # asyncio and ssl load with the transport; planning a server never needs them
    from pytest_infx.http1 import HTTPError, fetch

    url = base + path
    try:
        resp = await fetch(base, "POST", path, json.dumps(body).encode(), timeout_s=timeout_s)
    except HTTPError as exc:
        raise RenderError(f"POST {url}: {exc}") from None
    text = resp.body.decode("utf-8", "replace")
    if resp.status != 200:
        raise RenderError(f"POST {url}: HTTP {resp.status}: {text[:300]}")
    try:
        data = json.loads(text)
    except ValueError:
        raise RenderError(f"POST {url}: response is not JSON: {text[:300]}") from None
    if not isinstance(data, dict):
        raise RenderError(f"POST {url}: expected a JSON object, got {type(data).__name__}")
    return data

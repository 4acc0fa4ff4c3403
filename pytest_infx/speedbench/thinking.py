"""Verify the thinking mode that was served, not the one that was asked for.

A thinking switch can be lost on the way (kwargs sent where the server ignores them, a template
that does not know the key, a client that renders the template itself), and the run then measures
the other mode without any error. The server is asked how it renders the request, and the outputs
are checked for reasoning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from pytest_infx.speedbench.client import RequestRecord

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


class RenderError(RuntimeError):
    """The server would not tokenize or detokenize the chat request."""


async def rendered_prompt(
    client: httpx.AsyncClient,
    base_url: str,
    *,
    model: str,
    messages: Sequence[Mapping[str, str]],
    chat_template_kwargs: Mapping[str, Any] | None,
    timeout_s: float = 60.0,
) -> str:
    """The prompt text the server builds for this request (vLLM `/tokenize` + `/detokenize`)."""
    base = base_url.rstrip("/")
    body: dict[str, Any] = {
        "model": model,
        "messages": [dict(m) for m in messages],
        "add_generation_prompt": True,
    }
    if chat_template_kwargs is not None:
        body["chat_template_kwargs"] = dict(chat_template_kwargs)
    tokenized = await _post(client, f"{base}/tokenize", body, timeout_s)
    tokens = tokenized.get("tokens")
    if not isinstance(tokens, list):
        raise RenderError(f"POST {base}/tokenize: response has no 'tokens' list")
    detok = await _post(client, f"{base}/detokenize", {"model": model, "tokens": tokens}, timeout_s)
    prompt = detok.get("prompt")
    if not isinstance(prompt, str):
        raise RenderError(f"POST {base}/detokenize: response has no 'prompt' string")
    return prompt


async def _post(
    client: httpx.AsyncClient, url: str, body: Mapping[str, Any], timeout_s: float
) -> dict[str, Any]:
    try:
        resp = await client.post(url, json=body, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise RenderError(f"POST {url}: {type(exc).__name__}: {exc}") from None
    if resp.status_code != 200:
        raise RenderError(f"POST {url}: HTTP {resp.status_code}: {resp.text[:300]}")
    try:
        data = resp.json()
    except ValueError:
        raise RenderError(f"POST {url}: response is not JSON: {resp.text[:300]}") from None
    if not isinstance(data, dict):
        raise RenderError(f"POST {url}: expected a JSON object, got {type(data).__name__}")
    return data


def opens_thinking_block(text: str) -> bool:
    """The rendered prompt ends inside an open `<think>` block, right after the assistant turn.

    A template that disables thinking by pre-filling an empty `<think></think>` ends with the
    closing tag, so only a trailing open tag (whitespace allowed) counts.
    """
    return text.rstrip().endswith(THINK_OPEN)


def has_reasoning(record: RequestRecord) -> bool:
    """Reasoning was produced: the separate field, or inline tags when no parser split it out.

    Without a reasoning parser a template that opened the block leaves only `</think>` in the
    content, so either tag counts.
    """
    if record.reasoning.strip():
        return True
    return THINK_OPEN in record.content or THINK_CLOSE in record.content

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from pytest_infx.speedbench.client import RequestRecord
from pytest_infx.speedbench.thinking import (
    RenderError,
    has_reasoning,
    opens_thinking_block,
    rendered_prompt,
)

from .standin import StandinServer


def record(content: str = "", reasoning: str = "") -> RequestRecord:
    return RequestRecord("q", content, reasoning, 1, 1, 0.1, 0.2, "stop", None, None, 0.0)


@pytest.mark.parametrize(
    ("text", "opens"),
    [
        ("<|im_start|>assistant\n<think>\n", True),
        ("<|im_start|>assistant\n<think>", True),
        ("<\uff5cAssistant\uff5c><think>  \n\n", True),
        ("<|im_start|>assistant\n", False),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
        ("<|im_start|>user\nuse <think> tags<|im_end|>\n<|im_start|>assistant\n", False),
    ],
)
def test_opens_thinking_block(text: str, opens: bool) -> None:
    assert opens_thinking_block(text) is opens


def test_has_reasoning() -> None:
    assert has_reasoning(record(reasoning="because"))
    assert has_reasoning(record(content="<think>x</think> answer"))
    assert has_reasoning(record(content="x</think> answer"))
    assert not has_reasoning(record(content="answer", reasoning="  \n"))


@pytest.mark.parametrize("thinking", [True, False])
def test_rendered_prompt_asks_the_server(standin: StandinServer, thinking: bool) -> None:
    async def go() -> str:
        async with httpx.AsyncClient(trust_env=False) as http:
            return await rendered_prompt(
                http,
                standin.url,
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                chat_template_kwargs={"enable_thinking": thinking},
            )

    text = asyncio.run(go())
    assert text.startswith("<|im_start|>user\nhi<|im_end|>")
    assert opens_thinking_block(text) is thinking


def test_render_errors_name_the_endpoint(standin: StandinServer) -> None:
    async def go(url: str, **kw: Any) -> str:
        async with httpx.AsyncClient(trust_env=False) as http:
            return await rendered_prompt(
                http, url, model="m", messages=[], chat_template_kwargs=None, **kw
            )

    with pytest.raises(RenderError, match=r"/nope/tokenize: HTTP 404"):
        asyncio.run(go(standin.url + "/nope"))

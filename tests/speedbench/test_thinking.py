from __future__ import annotations

import asyncio
import socket

import pytest

from pytest_infx.engines.base import RenderError
from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.speedbench.client import RequestRecord
from pytest_infx.speedbench.thinking import has_reasoning, opens_thinking_block

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


def render(url: str, *, thinking: bool | None = None) -> str:
    kwargs = None if thinking is None else {"enable_thinking": thinking}
    messages = [{"role": "user", "content": "hi"}]
    probe = VllmAdapter().rendered_prompt(
        url, model="m", messages=messages, chat_template_kwargs=kwargs, timeout_s=5
    )
    return asyncio.run(probe)


@pytest.mark.parametrize("thinking", [True, False])
def test_vllm_renders_through_tokenize_and_detokenize(
    standin: StandinServer, thinking: bool
) -> None:
    text = render(standin.url, thinking=thinking)
    assert text.startswith("<|im_start|>user\nhi<|im_end|>")
    assert opens_thinking_block(text) is thinking


def test_vllm_render_errors_name_the_endpoint(standin: StandinServer) -> None:
    with pytest.raises(RenderError, match=r"POST http://[^ ]+/nope/tokenize: HTTP 404"):
        render(standin.url + "/nope")
    standin.state.tokenize_status = 500
    with pytest.raises(RenderError, match=r"/tokenize: HTTP 500: .*stand-in tokenize failure"):
        render(standin.url)


def test_vllm_render_to_a_server_that_is_gone_is_a_render_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RenderError, match=rf"POST http://127.0.0.1:{port}/tokenize: connect to"):
        render(f"http://127.0.0.1:{port}")


def test_sglang_cannot_render_so_it_asks_nothing(standin: StandinServer) -> None:
    probe = SglangAdapter().rendered_prompt(
        standin.url, model="m", messages=[], chat_template_kwargs=None
    )
    assert asyncio.run(probe) is None
    assert standin.connections == 0

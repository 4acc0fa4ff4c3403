"""A checkpoint's chat template rendered as ``transformers``' ``apply_chat_template`` renders it
for one user message with the generation prompt, which is what InferenceX's
``benchmark_serving.py --use-chat-template`` wraps each random prompt in.

The template is read where ``transformers`` reads it: the folder's ``chat_template.jinja``,
which wins, else ``tokenizer_config.json``'s ``chat_template`` (a string, or named templates of
which ``default`` is used). It renders in the sandboxed Jinja environment ``transformers``
builds (blocks trimmed, leading block whitespace stripped, loop controls, its ``tojson``,
``raise_exception`` and ``strftime_now``), with the tokenizer's named special tokens
(``bos_token``...) as variables, so a template that writes ``{{ bos_token }}`` gets the same
text.

DeepSeek-V4 ships no Jinja template: InferenceX's ``--dsv4`` wraps the prompt with the model's
own prompt encoder in thinking mode, which for one user message writes the begin-of-sentence
token, the user token, the message as it is, the assistant token and ``<think>``;
:class:`DeepSeekV4` writes the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pytest_infx.extras import MissingExtra, require
from pytest_infx.recipes.schema import DEEPSEEK_V4

TEMPLATE_FILE = "chat_template.jinja"
SETTINGS_FILE = "tokenizer_config.json"
"""The ``chat-template`` setting that picks DeepSeek-V4's own prompt encoding."""
SPECIAL_TOKENS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
"""The special tokens ``transformers`` gives a template by name (its ``special_tokens_map``)."""


class ChatTemplateError(ValueError):
    """A model folder whose chat template cannot be read or rendered, with the file and the fix."""


@dataclass(frozen=True)
class ChatTemplate:
    """The template's source, where it was read from, and the special tokens it may use."""

    source: str
    origin: Path
    special_tokens: tuple[tuple[str, str], ...] = ()

    @classmethod
    def load(cls, folder: Path) -> ChatTemplate:
        settings_path = folder / SETTINGS_FILE
        settings: dict[str, Any] = {}
        if settings_path.is_file():
            try:
                settings = json.loads(settings_path.read_text())
            except ValueError as exc:
                raise ChatTemplateError(f"{settings_path}: does not parse ({exc})") from None
        special = tuple(
            (name, token) for name in SPECIAL_TOKENS if (token := _token(settings.get(name)))
        )
        file = folder / TEMPLATE_FILE
        if file.is_file():
            return cls(file.read_text(encoding="utf-8"), file, special)
        source = _default(settings.get("chat_template"))
        if source is None:
            raise ChatTemplateError(
                f"{folder}: no chat template ({TEMPLATE_FILE}, or 'chat_template' in "
                f"{SETTINGS_FILE}); the point's 'chat-template: true' needs the model's own, so "
                "stage a checkpoint that ships one or set 'chat-template: false'"
            )
        return cls(source, settings_path, special)

    def user_turn(self, content: str) -> str:
        """One user message and the generation prompt, as text (special tokens as written)."""
        try:
            require("jinja2", purpose="the fixed-seq-len chat template")
        except MissingExtra as exc:
            raise ChatTemplateError(str(exc)) from None
        import jinja2

        try:
            rendered: str = _compiled(self.source).render(
                messages=[{"role": "user", "content": content}],
                tools=None,
                documents=None,
                add_generation_prompt=True,
                **dict(self.special_tokens),
            )
        except jinja2.TemplateError as exc:
            raise ChatTemplateError(f"{self.origin}: the chat template fails ({exc})") from None
        return rendered


@lru_cache(maxsize=8)
def _compiled(source: str) -> Any:
    """The template compiled once: a point renders it for every prompt."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: object,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


@dataclass(frozen=True)
class DeepSeekV4:
    """DeepSeek-V4's prompt format for one user message in thinking mode, as its encoder writes
    it (no system prompt, no reasoning effort)."""

    bos: str = "<\uff5cbegin\u2581of\u2581sentence\uff5c>"
    user: str = "<\uff5cUser\uff5c>"
    assistant: str = "<\uff5cAssistant\uff5c>"
    thinking: str = "<think>"

    def user_turn(self, content: str) -> str:
        return f"{self.bos}{self.user}{content}{self.assistant}{self.thinking}"


def chat_for(setting: bool | str, folder: Path) -> ChatTemplate | DeepSeekV4 | None:
    """The wrapping a block's ``chat-template`` setting asks for: none, the model folder's
    template, or DeepSeek-V4's encoding."""
    if setting == DEEPSEEK_V4:
        return DeepSeekV4()
    return ChatTemplate.load(folder) if setting else None


def _token(entry: object) -> str | None:
    """A special token as ``tokenizer_config.json`` writes it: text, or an added token's dict."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("content"), str):
        return str(entry["content"])
    return None


def _default(entry: object) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, list):
        named = {t.get("name"): t.get("template") for t in entry if isinstance(t, dict)}
        found = named.get("default")
        return found if isinstance(found, str) else None
    return None

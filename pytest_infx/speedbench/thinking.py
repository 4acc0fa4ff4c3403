"""Verify the thinking mode that was served, not the one that was asked for.

A thinking switch can be lost on the way (kwargs sent where the server ignores them, a template
that does not know the key, a client that renders the template itself), and the run then measures
the other mode without any error. The server is asked how it renders the request (through its
engine adapter, where the engine can tell), and the outputs are checked for reasoning.
"""

from __future__ import annotations

from pytest_infx.speedbench.client import RequestRecord

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


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

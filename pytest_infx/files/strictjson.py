"""The JSON reader of every file whose figures are kept: a repeated key is an error at that key.

Python's parser keeps the last of two equal keys, so an aggregate ending in a second
``"tput_per_gpu": 5.0`` or a cell file with a second ``"al"`` silently reports the later value.
Which of the two was meant is not for the reader to guess.
"""

from __future__ import annotations

import json
from typing import Any


class RepeatedKeyError(ValueError):
    """A JSON object with the same key twice; ``str()`` names the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key '{key}' appears twice in one object; keep the one that is meant")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise RepeatedKeyError(key)
        found[key] = value
    return found


def loads(text: str | bytes) -> Any:
    """``json.loads`` that raises RepeatedKeyError (a ValueError) on a key given twice in one
    object; the caller names the file. ``NaN`` and ``Infinity`` still parse, so that the number
    readers of :mod:`pytest_infx.files.numbers` can name the field that holds them."""
    return json.loads(text, object_pairs_hook=_unique)

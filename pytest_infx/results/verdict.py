"""The one word a result file gives for how its cell or point ended, for every kind.

SPEED-Bench cells always wrote ``pass``/``fail``; AgentX points wrote ``passed``/``failed``
before the words were made one. Files are written with :class:`Verdict` only, and read with
:func:`read`, which still understands the older words, so a results folder written before keeps
resuming and reporting.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"


class Status(StrEnum):
    """What the report shows for a cell: its verdict, or ``drift`` for a cell that passed its
    checks but lies outside its golden curve's tolerance."""

    PASS = "pass"
    FAIL = "fail"
    DRIFT = "drift"


OLDER_WORDS: Final[dict[str, Verdict]] = {"passed": Verdict.PASS, "failed": Verdict.FAIL}


def of(passed: bool) -> Verdict:
    return Verdict.PASS if passed else Verdict.FAIL


def read(word: object) -> Verdict | None:
    """The verdict a stored word stands for; None for a missing or unknown word, which no
    reader may take for a pass."""
    if not isinstance(word, str):
        return None
    try:
        return Verdict(word)
    except ValueError:
        return OLDER_WORDS.get(word)


def passed(record: object) -> bool:
    """Whether a stored record (a result file's mapping) says its item passed."""
    return isinstance(record, Mapping) and read(record.get("verdict")) is Verdict.PASS

"""What is shown of values that may be secrets (tokens, keys, passwords) in text pytest-infx
prints or logs: the plan, and the command of a server that could not be launched.

A recipe's ``engine.env`` may name a token the server needs; the plan and an error message
are pasted into issues and CI logs, so such a value is shown as ``***``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|API[_-]?KEY"
    r"|PRIVATE[_-]KEY|ACCESS[_-]KEY|SECRET[_-]KEY)$",
    re.I,
)
"""The last word of a variable or flag name: ``HF_TOKEN``, ``--api-key``, not
``max-num-tokens`` or SGLang's ``SGLANG_SIMULATE_ACC_TOKEN_MODE`` (a mode, not a token)."""
HIDDEN = "***"


def is_secret(name: str) -> bool:
    return SECRET_NAME.search(name.lstrip("-")) is not None


def shown_value(name: str, value: str) -> str:
    return HIDDEN if is_secret(name) else value


def shown_argv(argv: Iterable[str]) -> list[str]:
    """``argv`` with the value of each secret ``NAME=value`` (``docker -e``) or
    ``--secret-flag=value`` / ``--secret-flag value`` hidden."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(HIDDEN)
            hide_next = False
            continue
        name, sep, _ = arg.partition("=")
        if sep and is_secret(name):
            out.append(f"{name}={HIDDEN}")
            continue
        out.append(arg)
        hide_next = arg.startswith("--") and not sep and is_secret(arg)
    return out

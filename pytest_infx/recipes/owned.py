"""Engine flags that pytest-infx sets itself, under every spelling an engine's parser accepts.

The adapters put the model, the served name, the address, the TP size and the speculative
settings on the command line from the recipe's own fields. The same flag in ``engine.args``
gives the server two conflicting values (argparse keeps the last, so which one wins depends on
the adapter's order), so it is refused when the recipe is loaded, under any spelling that the
engines' ``argparse`` parsers resolve to it: underscores or dashes (one engine's parser maps one to
the other), leading or doubled dashes, surrounding spaces, ``name=value`` in the key, a JSON
sub-key (``speculative-config.num_speculative_tokens``), the engines' short aliases, and any
unambiguous prefix (argparse's ``allow_abbrev``, on in both engines: ``served-model`` is
``--served-model-name``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

_ALWAYS: Final[dict[str, str]] = {
    "model": "model.hub-id (or model.path)",
    "model-path": "model.hub-id (or model.path)",
    "served-model-name": "model.served-name",
    "host": "the plugin (it serves on 127.0.0.1)",
    "port": "engine.port",
    "tensor-parallel-size": "tp (or agentic.points[].tp)",
    "tp": "tp (or agentic.points[].tp)",
    "tp-size": "tp (or agentic.points[].tp)",
    "speculative-config": "the speculative block and the point's draft length",
    "speculative-model": "the speculative block and the point's draft length",
    "num-speculative-tokens": "the speculative block and the point's draft length",
    "speculative-algorithm": "the speculative block and the point's draft length",
    "speculative-draft-model-path": "the speculative block and the point's draft length",
    "speculative-num-steps": "the speculative block and the point's draft length",
    "speculative-eagle-topk": "the speculative block and the point's draft length",
    "speculative-num-draft-tokens": "the speculative block and the point's draft length",
    "enable-metrics": "the plugin (it reads the speculative counters)",
}
_AGENTIC: Final[dict[str, str]] = {
    "max-num-seqs": "agentic.admission-factor x the point's concurrency",
    "max-running-requests": "agentic.admission-factor x the point's concurrency",
    "cuda-graph-max-bs": "agentic.admission-factor x the point's concurrency",
    "cuda-graph-max-bs-decode": "agentic.admission-factor x the point's concurrency",
}


_DASHES = re.compile(r"[-_]+")


def canonical(name: str) -> str:
    """The flag a recipe key names, as the engines' parsers read it: no spaces, no leading
    dashes, no ``=value``, no JSON sub-key, lower case, one dash between words."""
    flag = name.strip().split("=", 1)[0].strip().lstrip("-").split(".", 1)[0]
    return _DASHES.sub("-", flag.lower()).strip("-")


def owner(name: str, *, agentic: bool) -> str | None:
    """The recipe field that sets flag ``name`` when the plugin owns it, else ``None``.

    An owned flag that ``name`` is a prefix of counts: argparse expands a unique prefix to the
    full flag, and an ambiguous one is an error in the engine anyway.
    """
    flag = canonical(name)
    if not flag:
        return None
    tables = (_ALWAYS, _AGENTIC) if agentic else (_ALWAYS,)
    for table in tables:
        found = table.get(flag)
        if found is not None:
            return found
    for table in tables:
        for owned in sorted(table):
            if owned.startswith(flag):
                return table[owned]
    return None


def spellings(names: Iterable[str]) -> dict[str, list[str]]:
    """Recipe keys by the flag they name, for the keys that name the same flag twice."""
    by_flag: dict[str, list[str]] = {}
    for name in names:
        by_flag.setdefault(canonical(name), []).append(name)
    return {flag: found for flag, found in by_flag.items() if len(found) > 1}

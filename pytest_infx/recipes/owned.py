"""Engine flags that pytest-infx sets itself, under every spelling an engine accepts.

The adapters put the model, the served name, the address, the TP size and the speculative
settings on the command line from the recipe's own fields. The same flag in ``engine.args``
gives the server two conflicting values (argparse keeps the last, so which one wins depends on
the adapter's order), so it is refused when the recipe is loaded, under any of its spellings:
underscores or dashes, with or without leading dashes, and the engines' short aliases.
"""

from __future__ import annotations

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
}
_AGENTIC: Final[dict[str, str]] = {
    "max-num-seqs": "agentic.admission-factor x the point's concurrency",
    "max-running-requests": "agentic.admission-factor x the point's concurrency",
    "cuda-graph-max-bs": "agentic.admission-factor x the point's concurrency",
}


def canonical(name: str) -> str:
    """The flag as the engines' parsers see it: no leading dashes, lower case, dashes."""
    return name.lstrip("-").lower().replace("_", "-")


def owner(name: str, *, agentic: bool) -> str | None:
    """The recipe field that sets flag ``name`` when the plugin owns it, else ``None``."""
    flag = canonical(name)
    found = _ALWAYS.get(flag)
    if found is None and agentic:
        found = _AGENTIC.get(flag)
    return found

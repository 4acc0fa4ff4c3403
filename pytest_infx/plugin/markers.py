"""The markers pytest-infx registers, and what happens when a host already has one of them.

``lint``, ``speedbench``, ``agentic`` and ``fixed_seq_len`` are the README's selection words,
so they stay. A repository that declares one of them itself (in its ini file or a conftest)
keeps its own declaration; selecting the marker then selects both its tests and pytest-infx's
items, which the header says. ``infx_lint`` marks the lint rules alone, so ``-m infx_lint``
runs them without a host's own lint-marked tests.
"""

from __future__ import annotations

import pytest

MARKERS = {
    "speedbench": "SPEED-Bench acceptance-length cell (one draft length x thinking mode)",
    "agentic": "AgentX throughput/latency point (one TP x concurrency)",
    "fixed_seq_len": "fixed-seq-len throughput/latency point (one TP x ISL/OSL x concurrency)",
    "lint": "repository rule (changelog, comments, recipes, golden registry)",
    "infx_lint": "pytest-infx's own lint rules alone (they also carry lint)",
}
OWN_LINT = "infx_lint"
_WHAT = {
    "speedbench": "the SPEED-Bench recipe cells",
    "agentic": "the AgentX recipe points",
    "fixed_seq_len": "the fixed-seq-len recipe points",
    "lint": f"pytest-infx's lint rules (-m {OWN_LINT}: the rules alone)",
    "infx_lint": "pytest-infx's lint rules",
}


def markexpr(config: pytest.Config) -> str:
    """The ``-m`` expression of this run, stripped; empty when none was given."""
    return str(config.getoption("markexpr", default="") or "").strip()


def declared(config: pytest.Config) -> set[str]:
    """Marker names the ini file and the plugins configured so far declare."""
    lines: list[str] = config.getini("markers")
    return {line.split(":", 1)[0].split("(", 1)[0].strip() for line in lines}


def register(config: pytest.Config) -> list[str]:
    """Declare the markers nobody has declared; a note for each one the host already has."""
    theirs = declared(config)
    notes = []
    for name, text in MARKERS.items():
        if name in theirs:
            notes.append(
                f"marker {name!r} is also this repository's: -m {name} selects its {name}-marked "
                f"tests and {_WHAT[name]}"
            )
        else:
            config.addinivalue_line("markers", f"{name}: {text}")
    return notes

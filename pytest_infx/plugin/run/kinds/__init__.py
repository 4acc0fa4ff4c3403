"""What a recipe item does when it runs: a module for SPEED-Bench cells, whose golden gate
needs syrupy's snapshot, the one generic adapter for every kind that measures its points
itself (AgentX, fixed-seq-len, and the kinds other packages provide), and :data:`ADAPTERS`,
the one place a built-in point's ``kind`` is turned into that behaviour.

These are the pytest side of the benchmark packages: they take the session context and a server
from the fixtures and write results and junit properties. Keeping them out of ``speedbench/`` and
``agentic/`` lets those packages stay free of pytest, the session context and the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_infx.plugin.collect.items import Runnable
from pytest_infx.plugin.output.summary import AGENTIC_PROPERTY, FIXED_PROPERTY
from pytest_infx.plugin.run.kinds.base import ItemKind
from pytest_infx.plugin.run.kinds.measured import Measured
from pytest_infx.plugin.run.kinds.speedbench import SPEEDBENCH

if TYPE_CHECKING:
    from pytest_infx.results.measure import Measures


def _agentic() -> Measures:
    """The AgentX kind, imported when one of its points runs (see :func:`_fixed_seq_len`)."""
    from pytest_infx.agentic.kind import KIND

    return KIND


def _fixed_seq_len() -> Measures:
    """The fixed-seq-len kind, imported when one of its points runs: its package imports the
    recipe schema, which a cached collection never loads."""
    from pytest_infx.fixedseq.kind import KIND

    return KIND


AGENTIC = Measured("agentic", _agentic, AGENTIC_PROPERTY)
FIXED_SEQ_LEN = Measured("fixed_seq_len", _fixed_seq_len, FIXED_PROPERTY)

_ALL: tuple[ItemKind, ...] = (SPEEDBENCH, AGENTIC, FIXED_SEQ_LEN)
ADAPTERS: Mapping[str, ItemKind] = MappingProxyType({kind.name: kind for kind in _ALL})
"""Every kind of recipe point by its name, which is the ``kind`` of its points."""

__all__ = ["ADAPTERS", "ItemKind", "Runnable"]

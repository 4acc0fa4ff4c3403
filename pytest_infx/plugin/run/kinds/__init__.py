"""What a recipe item does when it runs, one module per kind of point (SPEED-Bench cell, AgentX
point), and :data:`ADAPTERS`, the one place a point's ``kind`` is turned into that behaviour.

These are the pytest side of the benchmark packages: they take the session context and a server
from the fixtures and write results and junit properties. Keeping them out of ``speedbench/`` and
``agentic/`` lets those packages stay free of pytest, the session context and the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pytest_infx.plugin.collect.items import Runnable
from pytest_infx.plugin.run.kinds.agentic import AGENTIC
from pytest_infx.plugin.run.kinds.base import ItemKind
from pytest_infx.plugin.run.kinds.fixed import FIXED_SEQ_LEN
from pytest_infx.plugin.run.kinds.speedbench import SPEEDBENCH

_ALL: tuple[ItemKind, ...] = (SPEEDBENCH, AGENTIC, FIXED_SEQ_LEN)
ADAPTERS: Mapping[str, ItemKind] = MappingProxyType({kind.name: kind for kind in _ALL})
"""Every kind of recipe point by its name, which is the ``kind`` of its points."""

__all__ = ["ADAPTERS", "ItemKind", "Runnable"]

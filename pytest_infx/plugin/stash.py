"""The values pytest-infx keeps on pytest's items, keyed here.

A value of the whole run is an attribute of the session object
(:class:`pytest_infx.plugin.state.RunState`), never a stash key on the config: one place to find
the run's state, typed. What belongs to one item stays on the item, where pytest already keeps
it per item. Each key says which module writes it and which read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_infx.prepare.catalog import PointRef
    from pytest_infx.results.reuse import Reuse

REF: pytest.StashKey[PointRef] = pytest.StashKey()
"""item: the catalog entry of a recipe item (plugin.collect.files)."""
PREFLIGHT: pytest.StashKey[list[str]] = pytest.StashKey()
"""item: the problems preflight found; the point's fixture fails on them
(plugin.collect.session)."""
NO_SERVER: pytest.StashKey[bool] = pytest.StashKey()
"""item: an item that starts no server (plugin.run.resume)."""
REUSE: pytest.StashKey[Reuse] = pytest.StashKey()
"""item: the stored result an ``--infx-resume`` item reuses (plugin.run.resume)."""

ITEM_KEYS = (REF, PREFLIGHT, NO_SERVER, REUSE)
"""Every key of this module: the architecture test (tests/plugin/test_state.py) fails on a key
that is not listed here, so a value of the whole run cannot slip back onto the config."""

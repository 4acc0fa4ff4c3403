"""Pausing the cyclic garbage collector around the plugin's own allocation bursts.

Building thousands of items, a parsed recipe tree or a lint context allocates hundreds of
thousands of long-lived objects and no garbage cycles, so every collection the allocator triggers
meanwhile is wasted work. The pause is scoped to that work and restores the state it found: the
collector is the host test suite's, so the plugin never leaves it off or frozen.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused(pause: bool = True) -> Iterator[None]:
    """Keep the collector off inside the block when ``pause``; a collector that was already off
    stays off."""
    enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def freeze() -> bool:
    """Move every object that exists now out of the collector's reach; only when the collector
    is on and nobody else has frozen objects, so that :func:`unfreeze` gives back exactly what
    was found. Returns whether it froze."""
    if not gc.isenabled() or gc.get_freeze_count():
        return False
    gc.freeze()
    return True


def refreeze() -> None:
    """Add what was allocated since :func:`freeze` to the frozen set."""
    gc.freeze()


def unfreeze() -> None:
    gc.unfreeze()

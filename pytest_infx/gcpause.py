"""Pausing the cyclic garbage collector around the plugin's own allocation bursts.

Collecting the recipe folder (thousands of items, the catalog, maybe a parsed tree) or a streamed
pass allocates hundreds of thousands of long-lived objects and no garbage cycles, so every
collection the allocator triggers meanwhile is wasted work. Each pause is scoped to that work and
restores the state it found: the collector is the host test suite's, so the plugin never leaves
it off or frozen while a host test runs.
"""

from __future__ import annotations

import atexit
import functools
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


class Pause:
    """A pause that starts and stops at hook boundaries rather than around one block: from the
    first collector inside the recipe folder to the first one outside it."""

    def __init__(self) -> None:
        self._restore: bool | None = None

    def start(self) -> None:
        if self._restore is None:
            self._restore = gc.isenabled()
            gc.disable()

    def stop(self, *, freeze: bool = False) -> bool:
        """End the pause; with ``freeze``, first move every object that exists now out of the
        collector's reach, so resuming does not walk them. Freezes only when the collector
        runs once the pause ends and nobody else has frozen objects, so that :func:`unfreeze`
        gives back exactly what was found. Returns whether it froze."""
        enabled = gc.isenabled() if self._restore is None else self._restore
        froze = freeze and enabled and not gc.get_freeze_count()
        if froze:
            gc.freeze()
        if self._restore is not None:
            if self._restore:
                gc.enable()
            self._restore = None
        return froze


def refreeze() -> None:
    """Add what was allocated since :meth:`Pause.stop` froze to the frozen set."""
    gc.freeze()


def unfreeze() -> None:
    """Give the frozen objects back to the collector, and skip the interpreter's closing
    collection: a process that ran no host test would spend it walking what the plugin built,
    while a process that goes on (pytest run in-process) gets its collector back meanwhile."""
    gc.unfreeze()
    _freeze_at_exit()


@functools.cache
def _freeze_at_exit() -> None:
    """Registered once however many runs a process makes."""
    atexit.register(gc.freeze)

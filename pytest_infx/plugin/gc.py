"""The cyclic garbage collector around recipe collection.

Collection builds many small objects and frees none of them; the collector is paused while
pytest walks the recipe folder, and where no host test will run what collection built is frozen
so that no later collection walks it (see :mod:`pytest_infx.gcpause`).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

import pytest_infx.plugin.collect.files as collect
import pytest_infx.plugin.collect.lint as lint
import pytest_infx.plugin.stash as stash
from pytest_infx import gcpause


def around_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Where no host test will run (``--collect-only``, or only recipe and lint items), what
    collection built is frozen before the collector resumes, so neither the resumed collector nor
    pytest's closing full collection walks it; it is given back after that closing collection."""
    try:
        return (yield)
    finally:
        if session.config.stash[stash.GC_PAUSE].stop(freeze=_runs_only_ours(session)):
            session.config.stash[stash.FROZEN] = True


def collector_started(collector: pytest.Collector) -> None:
    """The collector is paused while pytest walks the recipe folder and running again for the
    host's own test files."""
    pause = collector.config.stash[stash.GC_PAUSE]
    if collect.in_recipe_folder(collector.config, collector.path):
        pause.start()
    else:
        pause.stop()


def session_finished(session: pytest.Session) -> None:
    if session.config.stash.get(stash.FROZEN, False):
        gcpause.refreeze()


def _runs_only_ours(session: pytest.Session) -> bool:
    """Whether no test of the host repository runs in this process: ``--collect-only``, or only
    recipe and lint items were selected."""
    if session.config.option.collectonly:
        return True
    items: list[pytest.Item] = getattr(session, "items", [])
    return all(collect.ref_of(i) is not None or isinstance(i, lint.LintItem) for i in items)

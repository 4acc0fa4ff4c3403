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
from pytest_infx import gcpause
from pytest_infx.plugin.state import RunState


def around_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Where no host test will run (``--collect-only``, or only recipe and lint items), what
    collection built is frozen before the collector resumes, so neither the resumed collector nor
    pytest's closing full collection walks it; it is given back after that closing collection."""
    try:
        return (yield)
    finally:
        state = RunState.of(session.config)
        if state.gc_pause.stop(freeze=_runs_only_ours(session)):
            state.frozen = True


def collector_started(collector: pytest.Collector) -> None:
    """The collector is paused while pytest walks the recipe folder and running again for the
    host's own test files."""
    pause = RunState.of(collector.config).gc_pause
    if collect.in_recipe_folder(collector.config, collector.path):
        pause.start()
    else:
        pause.stop()


def session_finished(session: pytest.Session) -> None:
    if RunState.of(session.config).frozen:
        gcpause.refreeze()


def _runs_only_ours(session: pytest.Session) -> bool:
    """Whether no test of the host repository runs in this process: ``--collect-only``, or only
    recipe and lint items were selected."""
    if session.config.option.collectonly:
        return True
    items: list[pytest.Item] = getattr(session, "items", [])
    return all(collect.ref_of(i) is not None or isinstance(i, lint.LintItem) for i in items)

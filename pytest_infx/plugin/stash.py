"""Every value pytest-infx keeps on pytest's config, session and items, keyed here.

One module, so that whoever reads a key finds who writes it by searching for one name: each key
says which module writes it and which read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.gcpause import Pause
    from pytest_infx.prepare.catalog import Catalog, PointRef
    from pytest_infx.recipes.loader import RecipeSource, Tree
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.reuse import Reuse
    from pytest_infx.results.tally import RecordTally
    from pytest_infx.settings import Settings


def add(config: pytest.Config, key: pytest.StashKey[tuple[str, ...]], lines: Iterable[str]) -> None:
    """Lines kept on the config are tuples, replaced whole: a later reader never sees a list
    that another hook is still changing."""
    config.stash[key] = (*config.stash.get(key, ()), *lines)


@dataclass(frozen=True)
class Folders:
    """This process's run folder (server registry, logs of the run, progress files) and the
    folder the progress display reads: under Slurm, one on the shared results filesystem, since
    a job's run folder is on its node. The controller makes them and hands them to its workers
    with the rest of ``workerinput``."""

    run: Path
    progress: Path | None


ACTIVE: pytest.StashKey[bool] = pytest.StashKey()
"""config: whether the repository opted in, so that pytest-infx acts in this run at all
(plugin.activation decides it before the initial conftests load; every hook reads it)."""
SETTINGS: pytest.StashKey[Settings] = pytest.StashKey()
"""config: the options as one value (plugin.options builds it once; every module reads it)."""
FOLDERS: pytest.StashKey[Folders] = pytest.StashKey()
"""config: written at configure (plugin.configure); read by the session fixture and the display."""
OWNS_RUN_FOLDER: pytest.StashKey[bool] = pytest.StashKey()
"""config: whether this process made the run folder, and so removes it (plugin.configure)."""
RUNNER: pytest.StashKey[str] = pytest.StashKey()
"""config: the runner whose points run (plugin.collect.session)."""
SUMMARY: pytest.StashKey[RecordTally] = pytest.StashKey()
"""config: the run's result summary (plugin.output.summary)."""
REASONS: pytest.StashKey[tuple[str, ...]] = pytest.StashKey()
"""config: one-line selection reasons shown at the end (plugin.collect.session adds to them,
plugin.workers brings a worker's to the controller, plugin.output.terminal prints them)."""
PLAN: pytest.StashKey[tuple[str, ...]] = pytest.StashKey()
"""config: the ``--infx-plan`` lines (plugin.collect.session writes, plugin.output.terminal
prints)."""
ENGINES: pytest.StashKey[EngineRegistry] = pytest.StashKey()
"""config: the run's engine registry, built on first use (plugin.options.engines)."""
FROZEN: pytest.StashKey[bool] = pytest.StashKey()
"""config: whether the collector's objects were frozen after collection (plugin.gc)."""
GC_PAUSE: pytest.StashKey[Pause] = pytest.StashKey()
"""config: the collector pause around recipe collection (made by plugin.configure, used by
plugin.gc)."""
HISTORY_RUN: pytest.StashKey[dict[str, object]] = pytest.StashKey()
"""config: the run's identity in the results history, as plain values (plugin.run.history makes
it on the controller and sends it to every worker in ``workerinput``)."""
NOTES: pytest.StashKey[tuple[str, ...]] = pytest.StashKey()
"""config: report-header notes (plugin.declare, plugin.markers)."""
GOLDEN_TREE: pytest.StashKey[dict[str, list[str] | None]] = pytest.StashKey()
"""config: the golden folder as the run started, sent to every worker (plugin.workers)."""
REPORT_MARKDOWN: pytest.StashKey[str] = pytest.StashKey()
"""config: the markdown report of the run (plugin.output.summary writes, plugin.output.reporter
reads)."""
SUITE: pytest.StashKey[pytest.Collector] = pytest.StashKey()
"""config: the lint rules' suite (plugin.collect.lint)."""
TREE: pytest.StashKey[Tree] = pytest.StashKey()
"""config: the recipe tree as loaded (plugin.collect.files)."""
CATALOG: pytest.StashKey[Catalog] = pytest.StashKey()
"""config: the catalog collection works from (plugin.collect.files)."""
SERVER_LABELS: pytest.StashKey[dict[str, str]] = pytest.StashKey()
"""config: each server key's label, made on first use from the catalog (plugin.collect.files)."""
SOURCES: pytest.StashKey[dict[Path, RecipeSource]] = pytest.StashKey()
"""config: recipe sources by path (plugin.collect.files)."""
POINTS: pytest.StashKey[dict[Path, dict[str, Point]]] = pytest.StashKey()
"""config: points by recipe file and id, loaded on demand (plugin.collect.files)."""
SESSION_ITEMS: pytest.StashKey[list[pytest.Item]] = pytest.StashKey()
"""config: the selected items (plugin.collect.session writes; plugin.run.session reads to size the
pool)."""
REF: pytest.StashKey[PointRef] = pytest.StashKey()
"""item: the catalog entry of a recipe item (plugin.collect.files)."""
PREFLIGHT: pytest.StashKey[list[str]] = pytest.StashKey()
"""item: the problems preflight found; the point's fixture fails on them
(plugin.collect.session)."""
NO_SERVER: pytest.StashKey[bool] = pytest.StashKey()
"""item: an item that starts no server (plugin.run.resume)."""
REUSE: pytest.StashKey[Reuse] = pytest.StashKey()
"""item: the stored result an ``--infx-resume`` item reuses (plugin.run.resume)."""

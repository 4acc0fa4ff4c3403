"""The run's values that pytest-infx keeps while pytest runs, as typed attributes of one object.

The object is the session plugin (:class:`pytest_infx.plugin.hooks.InfxSession`), registered
under :data:`NAME` once the repository opted in; this base class holds only its values, so that
the modules the hooks hand over to can read them without importing the hooks. Whoever has a
config finds them with :meth:`RunState.of`; what is kept per item stays on the item
(:mod:`pytest_infx.plugin.stash`). Values made on first use start as ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_infx.gcpause import Pause

if TYPE_CHECKING:
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.prepare.catalog import Catalog
    from pytest_infx.recipes.loader import RecipeSource, Tree
    from pytest_infx.recipes.points import Point
    from pytest_infx.settings import Settings

NAME = "infx-session"
"""The session plugin's name in pytest's plugin manager."""


@dataclass(frozen=True)
class Folders:
    """This process's run folder (server registry, logs of the run, progress files) and the
    folder the progress display reads: under Slurm, one on the shared results filesystem, since
    a job's run folder is on its node. The controller makes them and hands them to its workers
    with the rest of ``workerinput``."""

    run: Path
    progress: Path | None


class NotOptedInError(RuntimeError):
    """Code of the pytest side asked for the run's values in a run that did not opt in."""


@dataclass(eq=False)
class RunState:
    """Not frozen: hooks fill it in as the run goes. ``eq=False`` keeps it hashable by identity,
    which pytest's plugin manager needs of a plugin. Tuples are replaced whole (see
    :meth:`add_reasons`), so a reader never sees one that a hook is still changing."""

    config: pytest.Config
    settings: Settings | None = None
    """The options as one value (plugin.options builds it once; every module reads it)."""
    engines: EngineRegistry | None = None
    """The run's engine registry, built on first use (plugin.options.engines)."""
    folders: Folders | None = None
    """Written at configure (plugin.configure); read by the session fixture and the display."""
    owns_run_folder: bool = False
    """Whether this process made the run folder, and so removes it (plugin.configure)."""
    runner: str | None = None
    """The runner whose points run (plugin.collect.session)."""
    reasons: tuple[str, ...] = ()
    """One-line selection reasons shown at the end (plugin.collect.session adds to them,
    plugin.workers brings a worker's to the controller, plugin.output.terminal prints them)."""
    plan: tuple[str, ...] = ()
    """The ``--infx-plan`` lines (plugin.collect.session writes, plugin.output.terminal prints)."""
    notes: tuple[str, ...] = ()
    """Report-header notes (plugin.declare, plugin.markers)."""
    gc_pause: Pause = field(default_factory=Pause)
    """The collector pause around recipe collection (plugin.gc)."""
    frozen: bool = False
    """Whether the collector's objects were frozen after collection (plugin.gc)."""
    history_run: dict[str, object] | None = None
    """The run's identity in the results history, as plain values (plugin.run.history makes it
    on the controller and sends it to every worker in ``workerinput``)."""
    golden_tree: dict[str, list[str] | None] | None = None
    """The golden folder as the run started, sent to every worker (plugin.workers)."""
    report_markdown: str = ""
    """The markdown report of the run (plugin.output.reporter writes, plugin.output.summary
    reads)."""
    suite: pytest.Collector | None = None
    """The lint rules' suite (plugin.collect.lint)."""
    tree: Tree | None = None
    """The recipe tree as loaded (plugin.collect.files)."""
    catalog: Catalog | None = None
    """The catalog collection works from (plugin.collect.files)."""
    server_labels: dict[str, str] | None = None
    """Each server key's label, made on first use from the catalog (plugin.collect.files)."""
    sources: dict[Path, RecipeSource] | None = None
    """Recipe sources by path (plugin.collect.files)."""
    points: dict[Path, dict[str, Point]] = field(default_factory=dict)
    """Points by recipe file and id, loaded on demand (plugin.collect.files)."""
    session_items: list[pytest.Item] = field(default_factory=list)
    """The selected items (plugin.collect.session writes; plugin.run.session reads to size the
    pool)."""

    @classmethod
    def of(cls, config: pytest.Config) -> RunState:
        """The one session of this config; asking in a run that did not opt in is a bug of the
        caller, since only an opted-in run registers the hooks that lead here."""
        found = config.pluginmanager.get_plugin(NAME)
        if not isinstance(found, RunState):
            raise NotOptedInError(
                f"pytest-infx's {NAME} plugin is not registered: the repository did not opt in"
            )
        return found

    @property
    def worker(self) -> bool:
        """Whether this process is an xdist worker (xdist sets ``workerinput`` only there, after
        the session is made, so it is asked each time)."""
        return hasattr(self.config, "workerinput")

    def add_reasons(self, lines: Iterable[str]) -> None:
        self.reasons = (*self.reasons, *lines)

    def add_notes(self, lines: Iterable[str]) -> None:
        self.notes = (*self.notes, *lines)

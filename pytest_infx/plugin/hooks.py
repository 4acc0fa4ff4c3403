"""pytest-infx's side of one pytest run: one object whose methods are the hooks and whose
attributes are the run's values (:class:`~pytest_infx.plugin.state.RunState`), in the shape of
xdist's ``DSession`` and syrupy's ``SnapshotSession``.

It is registered only where the repository opted in (:mod:`pytest_infx.plugin.activation`), so
no hook asks again whether it should act, and a foreign project's run imports none of this. Each
hook hands over to the module that does its work (configure, collection, gc, workers,
terminal).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.collect.session as collection
import pytest_infx.plugin.configure as configure
import pytest_infx.plugin.gc as gc
import pytest_infx.plugin.output.terminal as terminal
import pytest_infx.plugin.workers as workers
from pytest_infx.plugin.state import NAME, RunState

if TYPE_CHECKING:
    from pytest_infx.compat.xdist import WorkerNode


class InfxSession(RunState):
    """Registered from ``pytest_load_initial_conftests``, where the opt-in is decided: the run's
    ``pytest_cmdline_main`` and the short options' notes come before ``pytest_configure``."""

    @classmethod
    def register(cls, config: pytest.Config) -> InfxSession:
        session = cls(config)
        config.pluginmanager.register(session, NAME)
        return session

    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_main(self, config: pytest.Config) -> None:
        configure.cmdline_main(config)

    def pytest_configure(self, config: pytest.Config) -> None:
        configure.configure(config)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        configure.unconfigure(config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: WorkerNode) -> None:
        workers.configure_node(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: WorkerNode, error: object) -> None:
        workers.node_down(node, error)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        return (yield from gc.around_collection(session))

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        gc.collector_started(collector)

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        return collection.ignore(collection_path, config)

    def pytest_collect_file(
        self, file_path: Path, parent: pytest.Collector
    ) -> pytest.Collector | None:
        return collection.recipe_file(file_path, parent)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        return (yield from collection.with_dangling_links(collector))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        collection.select(session, config, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        collection.finish(session)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        return terminal.header(config)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        gc.session_finished(session)
        terminal.exit_status(session)
        workers.send_reasons(session)

    def pytest_terminal_summary(
        self, terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
    ) -> None:
        terminal.summary(terminalreporter, config)

"""pytest-infx's pytest side: this module holds the hooks, each handing over to the module of
the package that does the work (options, configure, collection, gc, workers, terminal); the
package is the only place that imports pytest, besides the golden curves' syrupy extension.

Every hook but the option and hookspec registration first asks whether the repository opted in
(:mod:`pytest_infx.plugin.activation`): installed is not asked for."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.activation as activation
import pytest_infx.plugin.collect.session as collection
import pytest_infx.plugin.configure as configure
import pytest_infx.plugin.declare as declare
import pytest_infx.plugin.gc as gc
import pytest_infx.plugin.output.terminal as terminal
import pytest_infx.plugin.workers as workers

if TYPE_CHECKING:
    from pytest_infx.compat.xdist import WorkerNode

pytest_plugins = ["pytest_infx.plugin.run.fixtures"]


def pytest_addoption(parser: pytest.Parser) -> None:
    declare.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    configure.add_hookspecs(pluginmanager)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if activation.active(config):
        configure.cmdline_main(config)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, object, object]:
    if not activation.decide(early_config, args):
        return (yield)
    return (yield from configure.short_names(early_config, parser))


def pytest_configure(config: pytest.Config) -> None:
    if activation.active(config):
        configure.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    if activation.active(config):
        configure.unconfigure(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: WorkerNode) -> None:
    if activation.active(node.config):
        workers.configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: WorkerNode, error: object) -> None:
    if activation.active(node.config):
        workers.node_down(node, error)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    if not activation.active(session.config):
        return (yield)
    return (yield from gc.around_collection(session))


def pytest_collectstart(collector: pytest.Collector) -> None:
    if activation.active(collector.config):
        gc.collector_started(collector)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return collection.ignore(collection_path, config) if activation.active(config) else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not activation.active(parent.config):
        return None
    return collection.recipe_file(file_path, parent)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    if not activation.active(collector.config):
        return (yield)
    return (yield from collection.with_dangling_links(collector))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if activation.active(config):
        collection.select(session, config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    if activation.active(session.config):
        collection.finish(session)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return terminal.header(config) if activation.active(config) else []


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not activation.active(session.config):
        return
    gc.session_finished(session)
    terminal.exit_status(session)
    workers.send_reasons(session)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    if activation.active(config):
        terminal.summary(terminalreporter, config)

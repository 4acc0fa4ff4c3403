"""pytest-infx's pytest side: this module holds the hooks, each handing over to the module of
the package that does the work (options, configure, collection, gc, workers, terminal); the
package is the only place that imports pytest, besides the golden curves' syrupy extension."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

import pytest_infx.plugin.collection as collection
import pytest_infx.plugin.configure as configure
import pytest_infx.plugin.gc as gc
import pytest_infx.plugin.options as options
import pytest_infx.plugin.terminal as terminal
import pytest_infx.plugin.workers as workers

pytest_plugins = ["pytest_infx.plugin.fixtures"]


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    configure.add_hookspecs(pluginmanager)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    configure.cmdline_main(config)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser
) -> Generator[None, Any, Any]:
    return (yield from configure.short_names(early_config, parser))


def pytest_configure(config: pytest.Config) -> None:
    configure.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    configure.unconfigure(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    workers.configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    workers.node_down(node, error)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, Any, Any]:
    return (yield from gc.around_collection(session))


def pytest_collectstart(collector: pytest.Collector) -> None:
    gc.collector_started(collector)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return collection.ignore(collection_path, config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return collection.recipe_file(file_path, parent)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    return (yield from collection.with_dangling_links(collector))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    collection.select(session, config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    collection.finish(session)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return terminal.header(config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    gc.session_finished(session)
    terminal.exit_status(session)
    workers.send_reasons(session)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    terminal.summary(terminalreporter, config)

"""pytest-infx's pytest side: this module holds the hooks, each handing over to the module of
the package that does the work (options, configure, collection, gc, workers, terminal); the
package is the only place that imports pytest, besides the golden curves' syrupy extension.

Every hook but the option and hookspec registration first asks whether the repository opted in
(:mod:`pytest_infx.plugin.activation`): installed is not asked for. pytest imports this module in
every run of the environment, opted in or not, so at the top it imports only what declares the
options and decides the opt-in; each hook imports the module that does its work, and the
fixtures are registered only once the run is known to be pytest-infx's, so that a foreign
project's run pays for none of it (and sees none of the fixtures)."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import pytest_infx.plugin.activation as activation
import pytest_infx.plugin.declare as declare

if TYPE_CHECKING:
    from pytest_infx.compat.xdist import WorkerNode

FIXTURES = "pytest_infx.plugin.run.fixtures"
"""The fixtures' plugin module, registered when the run opted in."""


def pytest_addoption(parser: pytest.Parser) -> None:
    declare.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    import pytest_infx.plugin.hookspecs as hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if activation.active(config):
        import pytest_infx.plugin.configure as configure

        configure.cmdline_main(config)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, object, object]:
    if not activation.decide(early_config, args):
        return (yield)
    import pytest_infx.plugin.configure as configure

    early_config.pluginmanager.import_plugin(FIXTURES)
    return (yield from configure.short_names(early_config, parser))


def pytest_configure(config: pytest.Config) -> None:
    if activation.active(config):
        import pytest_infx.plugin.configure as configure

        configure.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    if activation.active(config):
        import pytest_infx.plugin.configure as configure

        configure.unconfigure(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: WorkerNode) -> None:
    if activation.active(node.config):
        import pytest_infx.plugin.workers as workers

        workers.configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: WorkerNode, error: object) -> None:
    if activation.active(node.config):
        import pytest_infx.plugin.workers as workers

        workers.node_down(node, error)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    if not activation.active(session.config):
        return (yield)
    import pytest_infx.plugin.gc as gc

    return (yield from gc.around_collection(session))


def pytest_collectstart(collector: pytest.Collector) -> None:
    if activation.active(collector.config):
        import pytest_infx.plugin.gc as gc

        gc.collector_started(collector)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if not activation.active(config):
        return None
    import pytest_infx.plugin.collect.session as collection

    return collection.ignore(collection_path, config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not activation.active(parent.config):
        return None
    import pytest_infx.plugin.collect.session as collection

    return collection.recipe_file(file_path, parent)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    if not activation.active(collector.config):
        return (yield)
    import pytest_infx.plugin.collect.session as collection

    return (yield from collection.with_dangling_links(collector))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if activation.active(config):
        import pytest_infx.plugin.collect.session as collection

        collection.select(session, config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    if activation.active(session.config):
        import pytest_infx.plugin.collect.session as collection

        collection.finish(session)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not activation.active(config):
        return []
    import pytest_infx.plugin.output.terminal as terminal

    return terminal.header(config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not activation.active(session.config):
        return
    import pytest_infx.plugin.gc as gc
    import pytest_infx.plugin.output.terminal as terminal
    import pytest_infx.plugin.workers as workers

    gc.session_finished(session)
    terminal.exit_status(session)
    workers.send_reasons(session)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    if activation.active(config):
        import pytest_infx.plugin.output.terminal as terminal

        terminal.summary(terminalreporter, config)

"""pytest-infx's pytest side: this module declares the options and the hookspecs and decides
whether the repository opted in; everything else is one session object, registered only then
(:class:`pytest_infx.plugin.hooks.InfxSession`), whose methods are the hooks and whose
attributes are the run's values. The package is the only place that imports pytest, besides the
golden curves' syrupy extension.

Installed is not asked for (:mod:`pytest_infx.plugin.activation`). pytest imports this module in
every run of the environment, opted in or not, so at the top it imports only what declares the
options and decides the opt-in; the session, its hooks and the fixtures are imported and
registered only once the run is known to be pytest-infx's, so that a foreign project's run pays
for none of it (and sees none of the fixtures)."""

from __future__ import annotations

from collections.abc import Generator

import pytest

import pytest_infx.plugin.activation as activation
import pytest_infx.plugin.declare as declare

FIXTURES = "pytest_infx.plugin.run.fixtures"
"""The fixtures' plugin module, registered when the run opted in."""


def pytest_addoption(parser: pytest.Parser) -> None:
    declare.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    import pytest_infx.plugin.hookspecs as hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, object, object]:
    """The opt-in is decided before the initial conftests load, and the session registered
    then, so that its ``pytest_cmdline_main`` and the short options' notes find it."""
    if not activation.decide(early_config, args):
        return (yield)
    import pytest_infx.plugin.configure as configure
    from pytest_infx.plugin.hooks import InfxSession

    InfxSession.register(early_config)
    early_config.pluginmanager.import_plugin(FIXTURES)
    return (yield from configure.short_names(early_config, parser))

